/* PolyBench 4.2 syrk: C = alpha*A*A^T + beta*C on the lower triangle (j <= i) only; the strict
   upper triangle of C is left untouched. A is n x m row-major.
   Loops run i-j-k rather than PolyBench's i-k-j: every C[i][j] still receives its products in the
   same k order, so the result is bit-identical, without walking A down its columns. */
void kernel_syrk(int n, int m, float alpha, float beta, float *C, const float *A)
{
    for (int i = 0; i < n; i++) {
        const float *ai = A + (long)i * m;
        for (int j = 0; j <= i; j++) {
            const float *aj = A + (long)j * m;
            float c = C[(long)i * n + j] * beta;
            for (int k = 0; k < m; k++)
                c += alpha * ai[k] * aj[k];
            C[(long)i * n + j] = c;
        }
    }
}
