/* 4 x 8 micro-kernel: eight 4-wide accumulators of C stay in registers across a KC slab of k,
   so each B vector load feeds four multiply-adds. Edges fall back to scalar loops. */
#include <string.h>
#define KC 128
#define NC 256

typedef float v4 __attribute__((vector_size(16)));
static inline v4 ld(const float *p) { v4 v; memcpy(&v, p, sizeof v); return v; }
static inline void st(float *p, v4 v) { memcpy(p, &v, sizeof v); }
static inline v4 splat(float x) { v4 v = {x, x, x, x}; return v; }

void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                 float *restrict C, const float *restrict A, const float *restrict B)
{
    for (long i = 0; i < (long)ni * nj; i++)
        C[i] *= beta;
    for (int j0 = 0; j0 < nj; j0 += NC) {
        int j1 = j0 + NC < nj ? j0 + NC : nj;
        for (int k0 = 0; k0 < nk; k0 += KC) {
            int k1 = k0 + KC < nk ? k0 + KC : nk;
            int i = 0;
            for (; i + 4 <= ni; i += 4) {
                float *c0 = C + (long)i * nj, *c1 = c0 + nj, *c2 = c1 + nj, *c3 = c2 + nj;
                const float *a0 = A + (long)i * nk, *a1 = a0 + nk, *a2 = a1 + nk, *a3 = a2 + nk;
                int j = j0;
                for (; j + 8 <= j1; j += 8) {
                    v4 x00 = ld(c0 + j), x01 = ld(c0 + j + 4), x10 = ld(c1 + j), x11 = ld(c1 + j + 4);
                    v4 x20 = ld(c2 + j), x21 = ld(c2 + j + 4), x30 = ld(c3 + j), x31 = ld(c3 + j + 4);
                    for (int k = k0; k < k1; k++) {
                        const float *b = B + (long)k * nj + j;
                        v4 b0 = ld(b), b1 = ld(b + 4);
                        v4 s0 = splat(alpha * a0[k]), s1 = splat(alpha * a1[k]);
                        v4 s2 = splat(alpha * a2[k]), s3 = splat(alpha * a3[k]);
                        x00 += s0 * b0; x01 += s0 * b1; x10 += s1 * b0; x11 += s1 * b1;
                        x20 += s2 * b0; x21 += s2 * b1; x30 += s3 * b0; x31 += s3 * b1;
                    }
                    st(c0 + j, x00); st(c0 + j + 4, x01); st(c1 + j, x10); st(c1 + j + 4, x11);
                    st(c2 + j, x20); st(c2 + j + 4, x21); st(c3 + j, x30); st(c3 + j + 4, x31);
                }
                for (; j < j1; j++)
                    for (int k = k0; k < k1; k++) {
                        float b = B[(long)k * nj + j];
                        c0[j] += alpha * a0[k] * b; c1[j] += alpha * a1[k] * b;
                        c2[j] += alpha * a2[k] * b; c3[j] += alpha * a3[k] * b;
                    }
            }
            for (; i < ni; i++)
                for (int k = k0; k < k1; k++) {
                    float a = alpha * A[(long)i * nk + k];
                    for (int j = j0; j < j1; j++)
                        C[(long)i * nj + j] += a * B[(long)k * nj + j];
                }
        }
    }
}
