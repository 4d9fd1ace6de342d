// 2.5-D blocking: a block owns a (j, k) tile and marches along i through ICHUNK planes.
// The current plane (with a one-point halo) sits in shared memory, the planes below and
// above in registers, so each input value is read from global memory about once.
#define TILE_X 32
#define TILE_Y 8
#define ICHUNK 32

__global__ void heat_sweep_tiled(int n, const float *__restrict__ src, float *__restrict__ dst)
{
    __shared__ float plane[TILE_Y + 2][TILE_X + 2];
    const int tid = threadIdx.y * TILE_X + threadIdx.x;
    const int k0 = 1 + blockIdx.x * TILE_X, j0 = 1 + blockIdx.y * TILE_Y;
    const int k = k0 + threadIdx.x, j = j0 + threadIdx.y;
    const bool active = k < n - 1 && j < n - 1;
    const long long n2 = (long long)n * n;
    const int ib = 1 + blockIdx.z * ICHUNK;
    const int ie = min(ib + ICHUNK, n - 1);
    const long long cj = (long long)j * n + k;
    float below = active ? __ldg(src + (ib - 1) * n2 + cj) : 0.0f;
    float cur = active ? __ldg(src + ib * n2 + cj) : 0.0f;
    for (int i = ib; i < ie; i++) {
        for (int q = tid; q < (TILE_Y + 2) * (TILE_X + 2); q += TILE_X * TILE_Y) {
            int jj = j0 - 1 + q / (TILE_X + 2), kk = k0 - 1 + q % (TILE_X + 2);
            plane[q / (TILE_X + 2)][q % (TILE_X + 2)] =
                (jj < n && kk < n) ? __ldg(src + i * n2 + (long long)jj * n + kk) : 0.0f;
        }
        __syncthreads();
        if (active) {
            const int ty = threadIdx.y + 1, tx = threadIdx.x + 1;
            float above = __ldg(src + (i + 1) * n2 + cj);
            dst[i * n2 + cj] = 0.125f * (above - 2.0f * cur + below)
                             + 0.125f * (plane[ty + 1][tx] - 2.0f * cur + plane[ty - 1][tx])
                             + 0.125f * (plane[ty][tx + 1] - 2.0f * cur + plane[ty][tx - 1])
                             + cur;
            below = cur;
            cur = above;
        }
        __syncthreads();
    }
}

extern "C" void kernel_heat_3d(int tsteps, int n, float *A, float *B)
{
    if (n < 3) return;
    dim3 grid((n - 2 + TILE_X - 1) / TILE_X, (n - 2 + TILE_Y - 1) / TILE_Y, (n - 2 + ICHUNK - 1) / ICHUNK);
    dim3 block(TILE_X, TILE_Y);
    for (int t = 0; t < tsteps; t++) {
        heat_sweep_tiled<<<grid, block>>>(n, A, B);
        heat_sweep_tiled<<<grid, block>>>(n, B, A);
    }
}
