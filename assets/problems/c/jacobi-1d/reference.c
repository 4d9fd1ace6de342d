/* PolyBench 4.2 jacobi-1d: tsteps double sweeps A -> B -> A of the 3-point average; the end
   points of A and B are never written. The weight is the float 0.33333f so that float32 kernels
   can reproduce every step exactly. */
void kernel_jacobi_1d(int tsteps, int n, float *A, float *B)
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
        for (int i = 1; i < n - 1; i++)
            A[i] = 0.33333f * (B[i - 1] + B[i] + B[i + 1]);
    }
}
