void kernel_conv2d(int h, int w, int kh, int kw, const float *in, const float *filt, float *out)
{
    int ry = kh / 2, rx = kw / 2;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float acc = 0.0f;
            for (int i = 0; i < kh; i++) {
                int iy = y + i - ry;
                if (iy < 0 || iy >= h)
                    continue;
                for (int j = 0; j < kw; j++) {
                    int ix = x + j - rx;
                    if (ix < 0 || ix >= w)
                        continue;
                    acc += filt[i * kw + j] * in[(long)iy * w + ix];
                }
            }
            out[(long)y * w + x] = acc;
        }
}
