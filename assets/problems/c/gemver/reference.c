/* PolyBench 4.2 gemver: A += u1*v1^T + u2*v2^T; x += beta*A^T*y; x += z; w += alpha*A*x.
   The x nest runs j-outer so A is read by rows; each x[i] still receives its terms in
   PolyBench's j order, so the result is bit-identical. */
void kernel_gemver(int n, float alpha, float beta, float *A,
                   const float *u1, const float *v1, const float *u2, const float *v2,
                   float *w, float *x, const float *y, const float *z)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            A[(long)i * n + j] = A[(long)i * n + j] + u1[i] * v1[j] + u2[i] * v2[j];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            x[i] = x[i] + beta * A[(long)j * n + i] * y[j];
    for (int i = 0; i < n; i++)
        x[i] = x[i] + z[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            w[i] = w[i] + alpha * A[(long)i * n + j] * x[j];
}
