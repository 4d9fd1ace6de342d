/* PolyBench 4.2 mvt: x1 += A*y_1, x2 += A^T*y_2, A n x n row-major.
   The second nest runs j-outer so A is read by rows; each x2[i] still receives its terms in
   PolyBench's j order, so the result is bit-identical. */
void kernel_mvt(int n, float *x1, float *x2, const float *y_1, const float *y_2, const float *A)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            x1[i] = x1[i] + A[(long)i * n + j] * y_1[j];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            x2[i] = x2[i] + A[(long)j * n + i] * y_2[j];
}
