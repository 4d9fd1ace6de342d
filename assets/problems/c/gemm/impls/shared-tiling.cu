// Classic tiled matmul: each A/B element is loaded from global memory once per tile, not per output.
#define TILE 16

__global__ void gemm_tiled(int ni, int nj, int nk, float alpha, float beta,
                           float *__restrict__ C, const float *__restrict__ A, const float *__restrict__ B)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int j = blockIdx.x * TILE + tx;
    int i = blockIdx.y * TILE + ty;
    float acc = 0.f;
    for (int k0 = 0; k0 < nk; k0 += TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (i < ni && ka < nk) ? A[(long long)i * nk + ka] : 0.f;
        Bs[ty][tx] = (kb < nk && j < nj) ? B[(long long)kb * nj + j] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (i < ni && j < nj) {
        long long c = (long long)i * nj + j;
        C[c] = alpha * acc + beta * C[c];
    }
}

extern "C" void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                            float *C, const float *A, const float *B)
{
    dim3 grid((nj + TILE - 1) / TILE, (ni + TILE - 1) / TILE);
    gemm_tiled<<<grid, dim3(TILE, TILE)>>>(ni, nj, nk, alpha, beta, C, A, B);
}
