// Direct port: one thread per C[i][j] with threadIdx.x over i, so a warp reads 16 rows of A.
#define BLOCK_X 16
#define BLOCK_Y 16

__global__ void gemm_naive(int ni, int nj, int nk, float alpha, float beta,
                           float *C, const float *A, const float *B)
{
    int i = blockIdx.x * BLOCK_X + threadIdx.x;
    int j = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= ni || j >= nj) return;
    long long c = (long long)i * nj + j;
    float acc = C[c] * beta;
    for (int k = 0; k < nk; k++)
        acc += alpha * A[(long long)i * nk + k] * B[(long long)k * nj + j];
    C[c] = acc;
}

extern "C" void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                            float *C, const float *A, const float *B)
{
    dim3 grid((ni + BLOCK_X - 1) / BLOCK_X, (nj + BLOCK_Y - 1) / BLOCK_Y);
    gemm_naive<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(ni, nj, nk, alpha, beta, C, A, B);
}
