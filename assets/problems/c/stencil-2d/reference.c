void kernel_stencil_2d(int h, int w, const float *in, float *out)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            long i = (long)y * w + x;
            if (y == 0 || y == h - 1 || x == 0 || x == w - 1)
                out[i] = in[i];
            else
                out[i] = 0.5f * in[i]
                       + 0.1f * (in[i - w] + in[i + w] + in[i - 1] + in[i + 1])
                       + 0.025f * (in[i - w - 1] + in[i - w + 1] + in[i + w - 1] + in[i + w + 1]);
        }
}
