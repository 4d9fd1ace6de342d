/* PolyBench 4.2 gesummv: y = alpha*A*x + beta*B*x, with tmp = A*x kept as an output. */
void kernel_gesummv(int n, float alpha, float beta, const float *A, const float *B,
                    float *tmp, const float *x, float *y)
{
    for (int i = 0; i < n; i++) {
        tmp[i] = 0.0f;
        y[i] = 0.0f;
        for (int j = 0; j < n; j++) {
            tmp[i] = A[(long)i * n + j] * x[j] + tmp[i];
            y[i] = B[(long)i * n + j] * x[j] + y[i];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
