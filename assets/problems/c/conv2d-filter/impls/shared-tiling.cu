// Each block stages its input tile plus the filter halo, and the filter itself, in
// shared memory; the tap loop then runs entirely out of shared memory. Out-of-image
// halo points are stored as zero, which adds nothing to the sum.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void conv2d_tiled(int h, int w, int kh, int kw, const float *__restrict__ in,
                             const float *__restrict__ filt, float *__restrict__ out)
{
    extern __shared__ float smem[];
    const int tw = BLOCK_X + kw - 1, th = BLOCK_Y + kh - 1;
    float *tile = smem;
    float *f = smem + th * tw;
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    const int ry = kh / 2, rx = kw / 2;
    for (int k = tid; k < kh * kw; k += BLOCK_X * BLOCK_Y)
        f[k] = filt[k];
    const int x0 = blockIdx.x * BLOCK_X;
    for (int y0 = blockIdx.y * BLOCK_Y; y0 < h; y0 += gridDim.y * BLOCK_Y) {
        for (int k = tid; k < th * tw; k += BLOCK_X * BLOCK_Y) {
            int gy = y0 - ry + k / tw, gx = x0 - rx + k % tw;
            tile[k] = (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in[(long long)gy * w + gx] : 0.0f;
        }
        __syncthreads();
        int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
        if (x < w && y < h) {
            float acc = 0.0f;
            for (int i = 0; i < kh; i++) {
                const float *t = tile + (threadIdx.y + i) * tw + threadIdx.x;
                for (int j = 0; j < kw; j++)
                    acc += f[i * kw + j] * t[j];
            }
            out[(long long)y * w + x] = acc;
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
    int gy = (h + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((w + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
    size_t smem = ((size_t)(BLOCK_Y + kh - 1) * (BLOCK_X + kw - 1) + (size_t)kh * kw) * sizeof(float);
    if (smem <= 48 * 1024)
        conv2d_tiled<<<grid, dim3(BLOCK_X, BLOCK_Y), smem>>>(h, w, kh, kw, in, filt, out);
    else
        conv2d_global<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(h, w, kh, kw, in, filt, out);
}
