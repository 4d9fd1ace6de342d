// threadIdx.x along rows (contiguous j) so every access is coalesced; the ey and ex
// updates only read hz and are fused into one kernel, hz follows in a second one.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void fdtd_e(int nx, int ny, float *__restrict__ ex, float *__restrict__ ey,
                       const float *__restrict__ hz, const float *__restrict__ fict, int t)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    if (j >= ny) return;
    for (int i = blockIdx.y * BLOCK_Y + threadIdx.y; i < nx; i += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        float h = hz[c];
        ey[c] = i == 0 ? fict[t] : ey[c] - 0.5f * (h - hz[c - ny]);
        if (j > 0)
            ex[c] -= 0.5f * (h - hz[c - 1]);
    }
}

__global__ void fdtd_h(int nx, int ny, const float *__restrict__ ex, const float *__restrict__ ey,
                       float *__restrict__ hz)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    if (j >= ny - 1) return;
    for (int i = blockIdx.y * BLOCK_Y + threadIdx.y; i < nx - 1; i += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        hz[c] -= 0.7f * (ex[c + 1] - ex[c] + ey[c + ny] - ey[c]);
    }
}

extern "C" void kernel_fdtd_2d(int tmax, int nx, int ny, float *ex, float *ey, float *hz, const float *fict)
{
    int gy = (nx + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((ny + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535), block(BLOCK_X, BLOCK_Y);
    for (int t = 0; t < tmax; t++) {
        fdtd_e<<<grid, block>>>(nx, ny, ex, ey, hz, fict, t);
        fdtd_h<<<grid, block>>>(nx, ny, ex, ey, hz);
    }
}
