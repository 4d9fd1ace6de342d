/* Tap-outer order: for each filter tap, one multiply-add over a run of columns whose
   valid range is computed up front, so the inner loop is branch-free and vectorizes.
   A chunk of CHUNK outputs is accumulated in a local buffer that stays in L1. The
   per-pixel order of the taps matches the reference. */
#define CHUNK 512

void kernel_conv2d(int h, int w, int kh, int kw, const float *restrict in, const float *restrict filt,
                   float *restrict out)
{
    int ry = kh / 2, rx = kw / 2;
    float acc[CHUNK];
    for (int y = 0; y < h; y++) {
        for (int x0 = 0; x0 < w; x0 += CHUNK) {
            int n = w - x0 < CHUNK ? w - x0 : CHUNK;
            for (int x = 0; x < n; x++)
                acc[x] = 0.0f;
            for (int i = 0; i < kh; i++) {
                int iy = y + i - ry;
                if (iy < 0 || iy >= h)
                    continue;
                const float *row = in + (long)iy * w;
                for (int j = 0; j < kw; j++) {
                    /* columns x with 0 <= x0 + x + j - rx < w */
                    int lo = rx - j - x0, hi = w + rx - j - x0;
                    if (lo < 0) lo = 0;
                    if (hi > n) hi = n;
                    const float f = filt[i * kw + j];
                    const float *src = row + x0 + j - rx;
                    for (int x = lo; x < hi; x++)
                        acc[x] += f * src[x];
                }
            }
            float *o = out + (long)y * w + x0;
            for (int x = 0; x < n; x++)
                o[x] = acc[x];
        }
    }
}
