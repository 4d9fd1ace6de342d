/* Boundary handled outside the hot loop, so the interior row loop is branch-free over
   restrict row pointers and the compiler vectorizes it. */
void kernel_stencil_2d(int h, int w, const float *restrict in, float *restrict out)
{
    for (int y = 0; y < h; y++) {
        const float *c = in + (long)y * w;
        float *o = out + (long)y * w;
        if (y == 0 || y == h - 1 || w < 3) {
            for (int x = 0; x < w; x++)
                o[x] = c[x];
            continue;
        }
        const float *n = c - w, *s = c + w;
        o[0] = c[0];
        for (int x = 1; x < w - 1; x++)
            o[x] = 0.5f * c[x]
                 + 0.1f * (n[x] + s[x] + c[x - 1] + c[x + 1])
                 + 0.025f * (n[x - 1] + n[x + 1] + s[x - 1] + s[x + 1]);
        o[w - 1] = c[w - 1];
    }
}
