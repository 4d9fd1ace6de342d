// tmp: a warp per row reads it with coalesced loads and combines lane sums with shuffles.
// y: one thread per column (already coalesced across the warp).
#define WARPS 8
#define BLOCK_SIZE 256

__global__ void atax_tmp(int m, int n, const float *__restrict__ A, const float *__restrict__ x,
                         float *__restrict__ tmp)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= m) return;  // whole warp leaves together
    const float *a = A + (long long)i * n;
    float s = 0.f;
    for (int j = lane; j < n; j += 32)
        s += a[j] * x[j];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) tmp[i] = s;
}

__global__ void atax_y(int m, int n, const float *__restrict__ A, const float *__restrict__ tmp,
                       float *__restrict__ y)
{
    int j = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (j >= n) return;
    float s = 0.f;
    for (int i = 0; i < m; i++)
        s += A[(long long)i * n + j] * tmp[i];
    y[j] = s;
}

extern "C" void kernel_atax(int m, int n, const float *A, const float *x, float *y, float *tmp)
{
    atax_tmp<<<(m + WARPS - 1) / WARPS, WARPS * 32>>>(m, n, A, x, tmp);
    atax_y<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(m, n, A, tmp, y);
}
