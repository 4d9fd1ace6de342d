/* PolyBench 4.2 covariance over data (n observations x m variables, row-major). data is centred
   in place, as PolyBench does. Loops are reordered so that rows are read contiguously; every
   mean[j] and cov[i][j] still receives its terms in PolyBench's order, so the result is
   bit-identical. */
void kernel_covariance(int m, int n, float float_n, float *data, float *cov, float *mean)
{
    for (int j = 0; j < m; j++)
        mean[j] = 0.0f;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            mean[j] += data[(long)i * m + j];
    for (int j = 0; j < m; j++)
        mean[j] /= float_n;

    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            data[(long)i * m + j] -= mean[j];

    for (int i = 0; i < m; i++) {
        float *c = cov + (long)i * m;
        for (int j = i; j < m; j++)
            c[j] = 0.0f;
        for (int k = 0; k < n; k++) {
            const float *row = data + (long)k * m;
            float d = row[i];
            for (int j = i; j < m; j++)
                c[j] += d * row[j];
        }
        for (int j = i; j < m; j++) {
            c[j] /= (float_n - 1.0f);
            cov[(long)j * m + i] = c[j];
        }
    }
}
