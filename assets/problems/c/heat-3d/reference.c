void kernel_heat_3d(int tsteps, int n, float *A, float *B)
{
    long n2 = (long)n * n;
    /* each time step is two sweeps: B = f(A), then A = f(B) */
    for (int s = 0; s < 2 * tsteps; s++) {
        const float *src = (s & 1) ? B : A;
        float *dst = (s & 1) ? A : B;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                for (int k = 1; k < n - 1; k++) {
                    long c = i * n2 + (long)j * n + k;
                    dst[c] = 0.125f * (src[c + n2] - 2.0f * src[c] + src[c - n2])
                           + 0.125f * (src[c + n] - 2.0f * src[c] + src[c - n])
                           + 0.125f * (src[c + 1] - 2.0f * src[c] + src[c - 1])
                           + src[c];
                }
    }
}
