/* cov = data^T * data as a gemm whose left operand is read straight from data's rows: a 4 x 8
   tile of cov (rows i..i+3, cols j..j+7) lives in eight 4-wide accumulators across a KC-row slab,
   fed per row k by one 4-float load (data[k][i..i+3]) and two vector loads of data[k][j..j+7].
   Tiles start at j = i, so a few entries below the diagonal are computed as scratch and then
   overwritten by the mirror copy. */
#include <string.h>
#define KC 128

typedef float v4 __attribute__((vector_size(16)));
static inline v4 ld(const float *p) { v4 v; memcpy(&v, p, sizeof v); return v; }
static inline void st(float *p, v4 v) { memcpy(p, &v, sizeof v); }
static inline v4 splat(float x) { v4 v = {x, x, x, x}; return v; }

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

    memset(cov, 0, sizeof(float) * (size_t)m * m);
    for (int k0 = 0; k0 < n; k0 += KC) {
        int k1 = k0 + KC < n ? k0 + KC : n;
        int i = 0;
        for (; i + 4 <= m; i += 4) {
            float *c0 = cov + (long)i * m, *c1 = c0 + m, *c2 = c1 + m, *c3 = c2 + m;
            int j = i;
            for (; j + 8 <= m; j += 8) {
                v4 x00 = ld(c0 + j), x01 = ld(c0 + j + 4), x10 = ld(c1 + j), x11 = ld(c1 + j + 4);
                v4 x20 = ld(c2 + j), x21 = ld(c2 + j + 4), x30 = ld(c3 + j), x31 = ld(c3 + j + 4);
                for (int k = k0; k < k1; k++) {
                    const float *row = data + (long)k * m;
                    v4 a = ld(row + i), b0 = ld(row + j), b1 = ld(row + j + 4);
                    v4 s0 = splat(a[0]), s1 = splat(a[1]), s2 = splat(a[2]), s3 = splat(a[3]);
                    x00 += s0 * b0; x01 += s0 * b1; x10 += s1 * b0; x11 += s1 * b1;
                    x20 += s2 * b0; x21 += s2 * b1; x30 += s3 * b0; x31 += s3 * b1;
                }
                st(c0 + j, x00); st(c0 + j + 4, x01); st(c1 + j, x10); st(c1 + j + 4, x11);
                st(c2 + j, x20); st(c2 + j + 4, x21); st(c3 + j, x30); st(c3 + j + 4, x31);
            }
            for (; j < m; j++)
                for (int k = k0; k < k1; k++) {
                    const float *row = data + (long)k * m;
                    float b = row[j];
                    c0[j] += row[i] * b; c1[j] += row[i + 1] * b;
                    c2[j] += row[i + 2] * b; c3[j] += row[i + 3] * b;
                }
        }
        for (; i < m; i++)
            for (int k = k0; k < k1; k++) {
                const float *row = data + (long)k * m;
                float d = row[i];
                for (int j = i; j < m; j++)
                    cov[(long)i * m + j] += d * row[j];
            }
    }
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            float s = cov[(long)i * m + j] / (float_n - 1.0f);
            cov[(long)i * m + j] = s;
            cov[(long)j * m + i] = s;
        }
}
