/* i-k-j over KC x NC blocks of B, so the block is reused from cache by every row of C;
   restrict lets the inner j loop vectorize without alias checks. */
#define KC 128
#define NC 256

void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                 float *restrict C, const float *restrict A, const float *restrict B)
{
    for (long i = 0; i < (long)ni * nj; i++)
        C[i] *= beta;
    for (int j0 = 0; j0 < nj; j0 += NC) {
        int j1 = j0 + NC < nj ? j0 + NC : nj;
        for (int k0 = 0; k0 < nk; k0 += KC) {
            int k1 = k0 + KC < nk ? k0 + KC : nk;
            for (int i = 0; i < ni; i++) {
                float *restrict c = C + (long)i * nj;
                for (int k = k0; k < k1; k++) {
                    float a = alpha * A[(long)i * nk + k];
                    const float *restrict b = B + (long)k * nj;
                    for (int j = j0; j < j1; j++)
                        c[j] += a * b[j];
                }
            }
        }
    }
}
