// One thread per C[i][j] with threadIdx.x over j: B and C rows coalesce, A[i][k] is a broadcast.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void gemm_coalesced(int ni, int nj, int nk, float alpha, float beta,
                               float *__restrict__ C, const float *__restrict__ A, const float *__restrict__ B)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    const float *a = A + (long long)i * nk;
    float acc = 0.f;
    for (int k = 0; k < nk; k++)
        acc += a[k] * B[(long long)k * nj + j];
    long long c = (long long)i * nj + j;
    C[c] = alpha * acc + beta * C[c];
}

extern "C" void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                            float *C, const float *A, const float *B)
{
    dim3 grid((nj + BLOCK_X - 1) / BLOCK_X, (ni + BLOCK_Y - 1) / BLOCK_Y);
    gemm_coalesced<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(ni, nj, nk, alpha, beta, C, A, B);
}
