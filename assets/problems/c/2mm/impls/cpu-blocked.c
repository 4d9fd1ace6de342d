/* Both products in i-k-j order over KC x NC blocks of the right operand, which stay in cache
   while every row of the output streams past; restrict lets the j loop vectorize. */
#define KC 128
#define NC 256

/* out (m x n) += alpha * X (m x k) * Y (k x n) */
static void mm_acc(int m, int n, int k, float alpha, float *restrict out,
                   const float *restrict X, const float *restrict Y)
{
    for (int j0 = 0; j0 < n; j0 += NC) {
        int j1 = j0 + NC < n ? j0 + NC : n;
        for (int p0 = 0; p0 < k; p0 += KC) {
            int p1 = p0 + KC < k ? p0 + KC : k;
            for (int i = 0; i < m; i++) {
                float *restrict o = out + (long)i * n;
                for (int p = p0; p < p1; p++) {
                    float a = alpha * X[(long)i * k + p];
                    const float *restrict y = Y + (long)p * n;
                    for (int j = j0; j < j1; j++)
                        o[j] += a * y[j];
                }
            }
        }
    }
}

void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                float *restrict tmp, const float *restrict A, const float *restrict B,
                const float *restrict C, float *restrict D)
{
    for (long i = 0; i < (long)ni * nj; i++)
        tmp[i] = 0.f;
    mm_acc(ni, nj, nk, alpha, tmp, A, B);
    for (long i = 0; i < (long)ni * nl; i++)
        D[i] *= beta;
    mm_acc(ni, nl, nj, 1.f, D, tmp, C);
}
