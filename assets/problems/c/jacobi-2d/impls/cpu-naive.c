/* PolyBench's two sweeps per step as written: each grid is streamed twice per step. */
void kernel_jacobi_2d(int tsteps, int n, float *A, float *B)
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[(long)i * n + j] = 0.2f * (A[(long)i * n + j] + A[(long)i * n + j - 1] + A[(long)i * n + j + 1]
                                             + A[(long)(i + 1) * n + j] + A[(long)(i - 1) * n + j]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[(long)i * n + j] = 0.2f * (B[(long)i * n + j] + B[(long)i * n + j - 1] + B[(long)i * n + j + 1]
                                             + B[(long)(i + 1) * n + j] + B[(long)(i - 1) * n + j]);
    }
}
