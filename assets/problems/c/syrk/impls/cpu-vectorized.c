/* Row-dot form in 4-wide vector types: a 2 x 4 block of dots (rows i, i+1 against rows j..j+3)
   shares every loaded vector, eight vector accumulators per block, over BJ x KC cache blocks of A.
   Triangle edges and leftovers fall back to scalar dots. */
#include <string.h>
#define BJ 32
#define KC 256

typedef float v4 __attribute__((vector_size(16)));
static inline v4 ld(const float *p) { v4 v; memcpy(&v, p, sizeof v); return v; }
static inline float hsum(v4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

static float dot(const float *restrict a, const float *restrict b, int k0, int k1)
{
    v4 s = {0.f, 0.f, 0.f, 0.f};
    int k = k0;
    for (; k + 4 <= k1; k += 4)
        s += ld(a + k) * ld(b + k);
    float r = hsum(s);
    for (; k < k1; k++)
        r += a[k] * b[k];
    return r;
}

void kernel_syrk(int n, int m, float alpha, float beta, float *restrict C, const float *restrict A)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            C[(long)i * n + j] *= beta;
    for (int j0 = 0; j0 < n; j0 += BJ) {
        int j1 = j0 + BJ < n ? j0 + BJ : n;
        for (int k0 = 0; k0 < m; k0 += KC) {
            int k1 = k0 + KC < m ? k0 + KC : m;
            int kv = k0 + (k1 - k0) / 4 * 4;
            for (int i = j0; i < n; i += 2) {
                int two = i + 1 < n;
                const float *a0 = A + (long)i * m, *a1 = a0 + (two ? m : 0);
                /* j < jfull is in the triangle for both rows i and i+1 */
                int jfull = i + 1 < j1 ? i + 1 : j1;
                int j = j0;
                for (; j + 4 <= jfull; j += 4) {
                    const float *b0 = A + (long)j * m, *b1 = b0 + m, *b2 = b1 + m, *b3 = b2 + m;
                    v4 s00 = {0}, s01 = {0}, s02 = {0}, s03 = {0}, s10 = {0}, s11 = {0}, s12 = {0}, s13 = {0};
                    for (int k = k0; k < kv; k += 4) {
                        v4 x0 = ld(a0 + k), x1 = ld(a1 + k);
                        v4 y0 = ld(b0 + k), y1 = ld(b1 + k), y2 = ld(b2 + k), y3 = ld(b3 + k);
                        s00 += x0 * y0; s01 += x0 * y1; s02 += x0 * y2; s03 += x0 * y3;
                        s10 += x1 * y0; s11 += x1 * y1; s12 += x1 * y2; s13 += x1 * y3;
                    }
                    float r00 = hsum(s00), r01 = hsum(s01), r02 = hsum(s02), r03 = hsum(s03);
                    float r10 = hsum(s10), r11 = hsum(s11), r12 = hsum(s12), r13 = hsum(s13);
                    for (int k = kv; k < k1; k++) {
                        r00 += a0[k] * b0[k]; r01 += a0[k] * b1[k]; r02 += a0[k] * b2[k]; r03 += a0[k] * b3[k];
                        r10 += a1[k] * b0[k]; r11 += a1[k] * b1[k]; r12 += a1[k] * b2[k]; r13 += a1[k] * b3[k];
                    }
                    float *c0 = C + (long)i * n + j;
                    c0[0] += alpha * r00; c0[1] += alpha * r01; c0[2] += alpha * r02; c0[3] += alpha * r03;
                    if (two) {
                        float *c1 = c0 + n;
                        c1[0] += alpha * r10; c1[1] += alpha * r11; c1[2] += alpha * r12; c1[3] += alpha * r13;
                    }
                }
                for (; j < jfull; j++) {
                    const float *b = A + (long)j * m;
                    C[(long)i * n + j] += alpha * dot(a0, b, k0, k1);
                    if (two) C[(long)(i + 1) * n + j] += alpha * dot(a1, b, k0, k1);
                }
                /* row i+1 reaches one column further: j = i + 1 when it is inside the block */
                if (two && i + 1 >= j0 && i + 1 < j1)
                    C[(long)(i + 1) * n + i + 1] += alpha * dot(a1, A + (long)(i + 1) * m, k0, k1);
            }
        }
    }
}
