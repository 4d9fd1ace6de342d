// Direct port: one kernel per loop nest of the time step, one thread per point, with
// threadIdx.x over rows i, so a warp touches 32 different rows (uncoalesced).
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void fdtd_ey(int nx, int ny, float *ey, const float *hz, const float *fict, int t)
{
    int i = blockIdx.x * BLOCK_X + threadIdx.x;
    if (i >= nx) return;
    for (int j = blockIdx.y * BLOCK_Y + threadIdx.y; j < ny; j += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        if (i == 0)
            ey[c] = fict[t];
        else
            ey[c] -= 0.5f * (hz[c] - hz[c - ny]);
    }
}

__global__ void fdtd_ex(int nx, int ny, float *ex, const float *hz)
{
    int i = blockIdx.x * BLOCK_X + threadIdx.x;
    if (i >= nx) return;
    for (int j = blockIdx.y * BLOCK_Y + threadIdx.y; j < ny; j += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        if (j > 0)
            ex[c] -= 0.5f * (hz[c] - hz[c - 1]);
    }
}

__global__ void fdtd_hz(int nx, int ny, const float *ex, const float *ey, float *hz)
{
    int i = blockIdx.x * BLOCK_X + threadIdx.x;
    if (i >= nx - 1) return;
    for (int j = blockIdx.y * BLOCK_Y + threadIdx.y; j < ny - 1; j += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        hz[c] -= 0.7f * (ex[c + 1] - ex[c] + ey[c + ny] - ey[c]);
    }
}

extern "C" void kernel_fdtd_2d(int tmax, int nx, int ny, float *ex, float *ey, float *hz, const float *fict)
{
    int gy = (ny + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((nx + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535), block(BLOCK_X, BLOCK_Y);
    for (int t = 0; t < tmax; t++) {
        fdtd_ey<<<grid, block>>>(nx, ny, ey, hz, fict, t);
        fdtd_ex<<<grid, block>>>(nx, ny, ex, hz);
        fdtd_hz<<<grid, block>>>(nx, ny, ex, ey, hz);
    }
}
