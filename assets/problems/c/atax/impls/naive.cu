// Direct port: one thread per output element; the tmp kernel walks each row in one thread, so a
// warp's loads hit 32 different rows.
#define BLOCK_SIZE 256

__global__ void atax_tmp(int m, int n, const float *A, const float *x, float *tmp)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= m) return;
    float s = 0.f;
    for (int j = 0; j < n; j++)
        s += A[(long long)i * n + j] * x[j];
    tmp[i] = s;
}

__global__ void atax_y(int m, int n, const float *A, const float *tmp, float *y)
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
    atax_tmp<<<(m + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(m, n, A, x, tmp);
    atax_y<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(m, n, A, tmp, y);
}
