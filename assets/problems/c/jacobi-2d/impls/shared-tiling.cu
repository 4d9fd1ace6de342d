// Two sweeps per step; each block loads its BLOCK_Y x BLOCK_X tile plus a one-point halo into
// shared memory once (coalesced along rows) and reads all five taps from there.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void jacobi2d_sweep(int n, const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float s[BLOCK_Y + 2][BLOCK_X + 2];
    int i0 = blockIdx.y * BLOCK_Y, j0 = blockIdx.x * BLOCK_X;
    int tid = threadIdx.y * BLOCK_X + threadIdx.x;
    for (int e = tid; e < (BLOCK_Y + 2) * (BLOCK_X + 2); e += BLOCK_X * BLOCK_Y) {
        int r = e / (BLOCK_X + 2), c = e % (BLOCK_X + 2);
        int gi = i0 - 1 + r, gj = j0 - 1 + c;
        s[r][c] = (gi >= 0 && gi < n && gj >= 0 && gj < n) ? in[(long long)gi * n + gj] : 0.f;
    }
    __syncthreads();
    int ty = threadIdx.y + 1, tx = threadIdx.x + 1;
    int i = i0 + threadIdx.y, j = j0 + threadIdx.x;
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        out[(long long)i * n + j] = 0.2f * (s[ty][tx] + s[ty][tx - 1] + s[ty][tx + 1] + s[ty + 1][tx] + s[ty - 1][tx]);
}

extern "C" void kernel_jacobi_2d(int tsteps, int n, float *A, float *B)
{
    dim3 grid((n + BLOCK_X - 1) / BLOCK_X, (n + BLOCK_Y - 1) / BLOCK_Y);
    dim3 block(BLOCK_X, BLOCK_Y);
    for (int t = 0; t < tsteps; t++) {
        jacobi2d_sweep<<<grid, block>>>(n, A, B);
        jacobi2d_sweep<<<grid, block>>>(n, B, A);
    }
}
