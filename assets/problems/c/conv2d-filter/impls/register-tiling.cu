// Shared-memory tile as in shared-tiling, but each thread computes RY vertically adjacent
// outputs: for each filter column it walks one window of RY + kh - 1 tile values and
// feeds every value to all the outputs that use it, cutting shared loads per output.
#define BLOCK_X 32
#define BLOCK_Y 8
#define RY 4

__global__ void conv2d_regtile(int h, int w, int kh, int kw, const float *__restrict__ in,
                               const float *__restrict__ filt, float *__restrict__ out)
{
    extern __shared__ float smem[];
    const int rows = BLOCK_Y * RY;
    const int tw = BLOCK_X + kw - 1, th = rows + kh - 1;
    float *tile = smem;
    float *f = smem + th * tw;
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    const int ry = kh / 2, rx = kw / 2;
    for (int k = tid; k < kh * kw; k += BLOCK_X * BLOCK_Y)
        f[k] = filt[k];
    const int x0 = blockIdx.x * BLOCK_X;
    for (int y0 = blockIdx.y * rows; y0 < h; y0 += gridDim.y * rows) {
        for (int k = tid; k < th * tw; k += BLOCK_X * BLOCK_Y) {
            int gy = y0 - ry + k / tw, gx = x0 - rx + k % tw;
            tile[k] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in[(long long)gy * w + gx] : 0.0f;
        }
        __syncthreads();
        float acc[RY];
#pragma unroll
        for (int k = 0; k < RY; k++)
            acc[k] = 0.0f;
        const float *col = tile + threadIdx.y * RY * tw + threadIdx.x;
        for (int j = 0; j < kw; j++) {
            for (int r = 0; r < RY + kh - 1; r++) {
                float v = col[r * tw + j];
#pragma unroll
                for (int k = 0; k < RY; k++) {
                    int i = r - k;
                    if (i >= 0 && i < kh)
                        acc[k] += f[i * kw + j] * v;
                }
            }
        }
        int x = x0 + threadIdx.x;
#pragma unroll
        for (int k = 0; k < RY; k++) {
            int y = y0 + threadIdx.y * RY + k;
            if (x < w && y < h)
                out[(long long)y * w + x] = acc[k];
        }
        __syncthreads();
    }
}

// Used only when the tile would not fit in the default 48 KB of shared memory.
__global__ void conv2d_global(int h, int w, int kh, int kw, const float *__restrict__ in,
                              const float *__restrict__ filt, float *__restrict__ out)
{
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    if (x >= w) return;
    for (int y = blockIdx.y * BLOCK_Y + threadIdx.y; y < h; y += gridDim.y * BLOCK_Y) {
        float acc = 0.0f;
        for (int i = 0; i < kh; i++) {
            int iy = y + i - kh / 2;
            if (iy < 0 || iy >= h) continue;
            for (int j = 0; j < kw; j++) {
                int ix = x + j - kw / 2;
                if (ix >= 0 && ix < w)
                    acc += __ldg(filt + i * kw + j) * __ldg(in + (long long)iy * w + ix);
            }
        }
        out[(long long)y * w + x] = acc;
    }
}

extern "C" void kernel_conv2d(int h, int w, int kh, int kw, const float *in, const float *filt, float *out)
{
    size_t smem = ((size_t)(BLOCK_Y * RY + kh - 1) * (BLOCK_X + kw - 1) + (size_t)kh * kw) * sizeof(float);
    if (smem <= 48 * 1024) {
        int gy = (h + BLOCK_Y * RY - 1) / (BLOCK_Y * RY);
        dim3 grid((w + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
        conv2d_regtile<<<grid, dim3(BLOCK_X, BLOCK_Y), smem>>>(h, w, kh, kw, in, filt, out);
    } else {
        int gy = (h + BLOCK_Y - 1) / BLOCK_Y;
        dim3 grid((w + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
        conv2d_global<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(h, w, kh, kw, in, filt, out);
    }
}
