/* PolyBench 4.2 jacobi-2d: tsteps double sweeps A -> B -> A of the 5-point average on an n x n
   row-major grid; the boundary rows and columns are never written. The weight is the float 0.2f
   so that float32 kernels adding the taps in the same order reproduce every step exactly. */
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
