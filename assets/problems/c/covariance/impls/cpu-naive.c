/* PolyBench's loop nests as written: the means and every cov dot product walk columns of data. */
void kernel_covariance(int m, int n, float float_n, float *data, float *cov, float *mean)
{
    for (int j = 0; j < m; j++) {
        mean[j] = 0.0f;
        for (int i = 0; i < n; i++)
            mean[j] += data[(long)i * m + j];
        mean[j] /= float_n;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            data[(long)i * m + j] -= mean[j];
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            float s = 0.0f;
            for (int k = 0; k < n; k++)
                s += data[(long)k * m + i] * data[(long)k * m + j];
            s /= (float_n - 1.0f);
            cov[(long)i * m + j] = s;
            cov[(long)j * m + i] = s;
        }
}
