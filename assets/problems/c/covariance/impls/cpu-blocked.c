/* Means and centring row by row; cov rows are built BI at a time, so each data row streamed from
   memory is reused by BI cov rows while it sits in cache. */
#define BI 32

void kernel_covariance(int m, int n, float float_n, float *restrict data, float *restrict cov,
                       float *restrict mean)
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

    for (int i0 = 0; i0 < m; i0 += BI) {
        int i1 = i0 + BI < m ? i0 + BI : m;
        for (int i = i0; i < i1; i++)
            for (int j = i; j < m; j++)
                cov[(long)i * m + j] = 0.0f;
        for (int k = 0; k < n; k++) {
            const float *restrict row = data + (long)k * m;
            for (int i = i0; i < i1; i++) {
                float d = row[i];
                float *restrict c = cov + (long)i * m;
                for (int j = i; j < m; j++)
                    c[j] += d * row[j];
            }
        }
        for (int i = i0; i < i1; i++)
            for (int j = i; j < m; j++) {
                float s = cov[(long)i * m + j] / (float_n - 1.0f);
                cov[(long)i * m + j] = s;
                cov[(long)j * m + i] = s;
            }
    }
}
