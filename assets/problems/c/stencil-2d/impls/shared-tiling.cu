// Each block stages its tile plus a one-point halo in shared memory, so every input
// value is fetched from global memory about once.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void stencil_tiled(int h, int w, const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float tile[BLOCK_Y + 2][BLOCK_X + 2];
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    const int x0 = blockIdx.x * BLOCK_X;
    const int x = x0 + threadIdx.x;
    for (int y0 = blockIdx.y * BLOCK_Y; y0 < h; y0 += gridDim.y * BLOCK_Y) {
        for (int k = tid; k < (BLOCK_Y + 2) * (BLOCK_X + 2); k += BLOCK_X * BLOCK_Y) {
            int gy = y0 - 1 + k / (BLOCK_X + 2), gx = x0 - 1 + k % (BLOCK_X + 2);
            tile[k / (BLOCK_X + 2)][k % (BLOCK_X + 2)] =
                (gy >= 0 && gy < h && gx >= 0 && gx < w) ? in[(long long)gy * w + gx] : 0.0f;
        }
        __syncthreads();
        int y = y0 + threadIdx.y;
        if (x < w && y < h) {
            const int ty = threadIdx.y + 1, tx = threadIdx.x + 1;
            float v = tile[ty][tx];
            if (!(y == 0 || y == h - 1 || x == 0 || x == w - 1))
                v = 0.5f * v
                  + 0.1f * (tile[ty - 1][tx] + tile[ty + 1][tx] + tile[ty][tx - 1] + tile[ty][tx + 1])
                  + 0.025f * (tile[ty - 1][tx - 1] + tile[ty - 1][tx + 1] + tile[ty + 1][tx - 1] + tile[ty + 1][tx + 1]);
            out[(long long)y * w + x] = v;
        }
        __syncthreads();
    }
}

extern "C" void kernel_stencil_2d(int h, int w, const float *in, float *out)
{
    int gy = (h + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((w + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
    stencil_tiled<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(h, w, in, out);
}
