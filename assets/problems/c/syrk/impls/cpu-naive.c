/* PolyBench's loop nest as written: i-k-j, so the inner j loop reads A[j][k] down a column. */
void kernel_syrk(int n, int m, float alpha, float beta, float *C, const float *A)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++)
            C[(long)i * n + j] *= beta;
        for (int k = 0; k < m; k++)
            for (int j = 0; j <= i; j++)
                C[(long)i * n + j] += alpha * A[(long)i * m + k] * A[(long)j * m + k];
    }
}
