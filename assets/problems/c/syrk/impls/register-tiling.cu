// BM x BN output blocks on or below the diagonal; each thread accumulates a TM x TN register tile.
// Both shared slabs are row tiles of A stored k-major (As[k][row]) so the inner loop reads
// broadcast / consecutive addresses. Thread rows/cols are interleaved for conflict-free reads.
#define BM 64
#define BN 64
#define BK 8
#define TM 4
#define TN 4
#define NT ((BM / TM) * (BN / TN))

__global__ void __launch_bounds__(NT) syrk_regtile(int n, int m, float alpha, float beta,
        float *__restrict__ C, const float *__restrict__ A)
{
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    if (col0 > row0 + BM - 1) return;  // uniform per block
    __shared__ float Xs[BK][BM];
    __shared__ float Ys[BK][BN];
    int tid = threadIdx.x;
    int tr = tid / (BN / TN), tc = tid % (BN / TN);
    float acc[TM][TN];
#pragma unroll
    for (int a = 0; a < TM; a++)
#pragma unroll
        for (int b = 0; b < TN; b++)
            acc[a][b] = 0.f;

    for (int k0 = 0; k0 < m; k0 += BK) {
        for (int e = tid; e < BM * BK; e += NT) {
            int r = e / BK, k = e % BK;
            int gi = row0 + r, gk = k0 + k;
            Xs[k][r] = (gi < n && gk < m) ? A[(long long)gi * m + gk] : 0.f;
        }
        for (int e = tid; e < BN * BK; e += NT) {
            int c = e / BK, k = e % BK;
            int gj = col0 + c, gk = k0 + k;
            Ys[k][c] = (gj < n && gk < m) ? A[(long long)gj * m + gk] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float xa[TM], yb[TN];
#pragma unroll
            for (int a = 0; a < TM; a++)
                xa[a] = Xs[k][tr + a * (BM / TM)];
#pragma unroll
            for (int b = 0; b < TN; b++)
                yb[b] = Ys[k][tc + b * (BN / TN)];
#pragma unroll
            for (int a = 0; a < TM; a++)
#pragma unroll
                for (int b = 0; b < TN; b++)
                    acc[a][b] += xa[a] * yb[b];
        }
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < TM; a++) {
        int gi = row0 + tr + a * (BM / TM);
        if (gi >= n) continue;
#pragma unroll
        for (int b = 0; b < TN; b++) {
            int gj = col0 + tc + b * (BN / TN);
            if (gj <= gi) {
                long long c = (long long)gi * n + gj;
                C[c] = alpha * acc[a][b] + beta * C[c];
            }
        }
    }
}

extern "C" void kernel_syrk(int n, int m, float alpha, float beta, float *C, const float *A)
{
    dim3 grid((n + BN - 1) / BN, (n + BM - 1) / BM);
    syrk_regtile<<<grid, NT>>>(n, m, alpha, beta, C, A);
}
