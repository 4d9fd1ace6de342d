/* PolyBench 4.2 bicg: s = A^T*r (length m), q = A*p (length n), A n x m row-major. */
void kernel_bicg(int m, int n, const float *A, float *s, float *q, const float *p, const float *r)
{
    for (int j = 0; j < m; j++)
        s[j] = 0.0f;
    for (int i = 0; i < n; i++) {
        const float *a = A + (long)i * m;
        q[i] = 0.0f;
        for (int j = 0; j < m; j++) {
            s[j] += r[i] * a[j];
            q[i] += a[j] * p[j];
        }
    }
}
