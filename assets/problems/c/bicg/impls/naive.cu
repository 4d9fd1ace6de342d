// Direct port: one thread per output element. The q kernel walks a row per thread, so a warp's
// loads hit 32 different rows; the s kernel's column walk is coalesced across the warp.
#define BLOCK_SIZE 256

__global__ void bicg_s(int m, int n, const float *A, const float *r, float *s)
{
    int j = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (j >= m) return;
    float acc = 0.f;
    for (int i = 0; i < n; i++)
        acc += r[i] * A[(long long)i * m + j];
    s[j] = acc;
}

__global__ void bicg_q(int m, int n, const float *A, const float *p, float *q)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float acc = 0.f;
    for (int j = 0; j < m; j++)
        acc += A[(long long)i * m + j] * p[j];
    q[i] = acc;
}

extern "C" void kernel_bicg(int m, int n, const float *A, float *s, float *q, const float *p, const float *r)
{
    bicg_s<<<(m + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(m, n, A, r, s);
    bicg_q<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(m, n, A, p, q);
}
