// BM x BN block tile; each thread keeps a TM x TN accumulator tile in registers, so every shared
// load feeds TM or TN FMAs. Thread rows/cols are interleaved (stride BM/TM, BN/TN) to avoid bank
// conflicts and keep the C writes coalesced.
#define BM 64
#define BN 64
#define BK 8
#define TM 4
#define TN 4
#define NT ((BM / TM) * (BN / TN))

__global__ void __launch_bounds__(NT) gemm_regtile(int ni, int nj, int nk, float alpha, float beta,
        float *__restrict__ C, const float *__restrict__ A, const float *__restrict__ B)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    int tid = threadIdx.x;
    int tr = tid / (BN / TN), tc = tid % (BN / TN);
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int m = 0; m < TM; m++)
#pragma unroll
        for (int n = 0; n < TN; n++)
            acc[m][n] = 0.f;

    for (int k0 = 0; k0 < nk; k0 += BK) {
        for (int e = tid; e < BM * BK; e += NT) {
            int m = e / BK, k = e % BK;
            int gi = row0 + m, gk = k0 + k;
            As[k][m] = (gi < ni && gk < nk) ? A[(long long)gi * nk + gk] : 0.f;
        }
        for (int e = tid; e < BK * BN; e += NT) {
            int k = e / BN, n = e % BN;
            int gk = k0 + k, gj = col0 + n;
            Bs[k][n] = (gk < nk && gj < nj) ? B[(long long)gk * nj + gj] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; m++)
                a[m] = As[k][tr + m * (BM / TM)];
#pragma unroll
            for (int n = 0; n < TN; n++)
                b[n] = Bs[k][tc + n * (BN / TN)];
#pragma unroll
            for (int m = 0; m < TM; m++)
#pragma unroll
                for (int n = 0; n < TN; n++)
                    acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; m++) {
        int gi = row0 + tr + m * (BM / TM);
        if (gi >= ni) continue;
#pragma unroll
        for (int n = 0; n < TN; n++) {
            int gj = col0 + tc + n * (BN / TN);
            if (gj < nj) {
                long long c = (long long)gi * nj + gj;
                C[c] = alpha * acc[m][n] + beta * C[c];
            }
        }
    }
}

extern "C" void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                            float *C, const float *A, const float *B)
{
    dim3 grid((nj + BN - 1) / BN, (ni + BM - 1) / BM);
    gemm_regtile<<<grid, NT>>>(ni, nj, nk, alpha, beta, C, A, B);
}
