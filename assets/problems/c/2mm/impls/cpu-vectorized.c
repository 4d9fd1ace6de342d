/* 4 x 8 micro-kernel: eight 4-wide accumulators stay in registers across a KC slab, so each
   right-operand vector load feeds four multiply-adds. Edges fall back to scalar loops. */
#include <string.h>
#define KC 128
#define NC 256

typedef float v4 __attribute__((vector_size(16)));
static inline v4 ld(const float *p) { v4 v; memcpy(&v, p, sizeof v); return v; }
static inline void st(float *p, v4 v) { memcpy(p, &v, sizeof v); }
static inline v4 splat(float x) { v4 v = {x, x, x, x}; return v; }

/* out (m x n) += alpha * X (m x k) * Y (k x n) */
static void mm_acc(int m, int n, int k, float alpha, float *restrict out,
                   const float *restrict X, const float *restrict Y)
{
    for (int j0 = 0; j0 < n; j0 += NC) {
        int j1 = j0 + NC < n ? j0 + NC : n;
        for (int p0 = 0; p0 < k; p0 += KC) {
            int p1 = p0 + KC < k ? p0 + KC : k;
            int i = 0;
            for (; i + 4 <= m; i += 4) {
                float *o0 = out + (long)i * n, *o1 = o0 + n, *o2 = o1 + n, *o3 = o2 + n;
                const float *x0 = X + (long)i * k, *x1 = x0 + k, *x2 = x1 + k, *x3 = x2 + k;
                int j = j0;
                for (; j + 8 <= j1; j += 8) {
                    v4 c00 = ld(o0 + j), c01 = ld(o0 + j + 4), c10 = ld(o1 + j), c11 = ld(o1 + j + 4);
                    v4 c20 = ld(o2 + j), c21 = ld(o2 + j + 4), c30 = ld(o3 + j), c31 = ld(o3 + j + 4);
                    for (int p = p0; p < p1; p++) {
                        const float *y = Y + (long)p * n + j;
                        v4 y0 = ld(y), y1 = ld(y + 4);
                        v4 s0 = splat(alpha * x0[p]), s1 = splat(alpha * x1[p]);
                        v4 s2 = splat(alpha * x2[p]), s3 = splat(alpha * x3[p]);
                        c00 += s0 * y0; c01 += s0 * y1; c10 += s1 * y0; c11 += s1 * y1;
                        c20 += s2 * y0; c21 += s2 * y1; c30 += s3 * y0; c31 += s3 * y1;
                    }
                    st(o0 + j, c00); st(o0 + j + 4, c01); st(o1 + j, c10); st(o1 + j + 4, c11);
                    st(o2 + j, c20); st(o2 + j + 4, c21); st(o3 + j, c30); st(o3 + j + 4, c31);
                }
                for (; j < j1; j++)
                    for (int p = p0; p < p1; p++) {
                        float y = Y[(long)p * n + j];
                        o0[j] += alpha * x0[p] * y; o1[j] += alpha * x1[p] * y;
                        o2[j] += alpha * x2[p] * y; o3[j] += alpha * x3[p] * y;
                    }
            }
            for (; i < m; i++)
                for (int p = p0; p < p1; p++) {
                    float a = alpha * X[(long)i * k + p];
                    for (int j = j0; j < j1; j++)
                        out[(long)i * n + j] += a * Y[(long)p * n + j];
                }
        }
    }
}

void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                float *restrict tmp, const float *restrict A, const float *restrict B,
                const float *restrict C, float *restrict D)
{
    for (long i = 0; i < (long)ni * nj; i++)
        tmp[i] = 0.f;
    mm_acc(ni, nj, nk, alpha, tmp, A, B);
    for (long i = 0; i < (long)ni * nl; i++)
        D[i] *= beta;
    mm_acc(ni, nl, nj, 1.f, D, tmp, C);
}
