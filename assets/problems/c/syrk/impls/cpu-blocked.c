/* Row-dot form C[i][j] += alpha * A[i].A[j] over blocks of BJ rows of A and KC columns, so the
   j block's rows stay in cache while every i >= j streams past. Four accumulators break the
   add dependency chain. */
#define BJ 32
#define KC 256

void kernel_syrk(int n, int m, float alpha, float beta, float *restrict C, const float *restrict A)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            C[(long)i * n + j] *= beta;
    for (int j0 = 0; j0 < n; j0 += BJ) {
        int j1 = j0 + BJ < n ? j0 + BJ : n;
        for (int k0 = 0; k0 < m; k0 += KC) {
            int k1 = k0 + KC < m ? k0 + KC : m;
            for (int i = j0; i < n; i++) {
                const float *restrict ai = A + (long)i * m;
                int jend = i + 1 < j1 ? i + 1 : j1;
                for (int j = j0; j < jend; j++) {
                    const float *restrict aj = A + (long)j * m;
                    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
                    int k = k0;
                    for (; k + 4 <= k1; k += 4) {
                        s0 += ai[k] * aj[k];
                        s1 += ai[k + 1] * aj[k + 1];
                        s2 += ai[k + 2] * aj[k + 2];
                        s3 += ai[k + 3] * aj[k + 3];
                    }
                    for (; k < k1; k++)
                        s0 += ai[k] * aj[k];
                    C[(long)i * n + j] += alpha * ((s0 + s1) + (s2 + s3));
                }
            }
        }
    }
}
