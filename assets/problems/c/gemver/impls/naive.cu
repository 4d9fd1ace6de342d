// Direct port of the three loop nests, one thread per output. The rank-2 update puts threadIdx.x
// on rows i (PolyBench's outer loop) and the w kernel walks a row per thread, so both make each
// warp touch 32 rows; the x kernel's column walk is coalesced.
#define BLOCK_SIZE 256

__global__ void gemver_update(int n, float *A, const float *u1, const float *v1,
                              const float *u2, const float *v2)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    for (int j = blockIdx.y; j < n; j += gridDim.y) {
        long long c = (long long)i * n + j;
        A[c] = A[c] + u1[i] * v1[j] + u2[i] * v2[j];
    }
}

__global__ void gemver_x(int n, float beta, const float *A, float *x, const float *y, const float *z)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float acc = x[i];
    for (int j = 0; j < n; j++)
        acc += beta * A[(long long)j * n + i] * y[j];
    x[i] = acc + z[i];
}

__global__ void gemver_w(int n, float alpha, const float *A, float *w, const float *x)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float acc = w[i];
    for (int j = 0; j < n; j++)
        acc += alpha * A[(long long)i * n + j] * x[j];
    w[i] = acc;
}

extern "C" void kernel_gemver(int n, float alpha, float beta, float *A,
                              const float *u1, const float *v1, const float *u2, const float *v2,
                              float *w, float *x, const float *y, const float *z)
{
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    dim3 grid(blocks, n < 65535 ? n : 65535);
    gemver_update<<<grid, BLOCK_SIZE>>>(n, A, u1, v1, u2, v2);
    gemver_x<<<blocks, BLOCK_SIZE>>>(n, beta, A, x, y, z);
    gemver_w<<<blocks, BLOCK_SIZE>>>(n, alpha, A, w, x);
}
