/* PolyBench 4.2 atax: tmp = A*x, y = A^T*tmp, A m x n row-major. */
void kernel_atax(int m, int n, const float *A, const float *x, float *y, float *tmp)
{
    for (int j = 0; j < n; j++)
        y[j] = 0.0f;
    for (int i = 0; i < m; i++) {
        const float *a = A + (long)i * n;
        tmp[i] = 0.0f;
        for (int j = 0; j < n; j++)
            tmp[i] += a[j] * x[j];
        for (int j = 0; j < n; j++)
            y[j] += a[j] * tmp[i];
    }
}
