void kernel_fdtd_2d(int tmax, int nx, int ny, float *ex, float *ey, float *hz, const float *fict)
{
    for (int t = 0; t < tmax; t++) {
        for (int j = 0; j < ny; j++)
            ey[j] = fict[t];
        for (int i = 1; i < nx; i++)
            for (int j = 0; j < ny; j++)
                ey[(long)i * ny + j] -= 0.5f * (hz[(long)i * ny + j] - hz[(long)(i - 1) * ny + j]);
        for (int i = 0; i < nx; i++)
            for (int j = 1; j < ny; j++)
                ex[(long)i * ny + j] -= 0.5f * (hz[(long)i * ny + j] - hz[(long)i * ny + j - 1]);
        for (int i = 0; i < nx - 1; i++)
            for (int j = 0; j < ny - 1; j++) {
                long c = (long)i * ny + j;
                hz[c] -= 0.7f * (ex[c + 1] - ex[c] + ey[c + ny] - ey[c]);
            }
    }
}
