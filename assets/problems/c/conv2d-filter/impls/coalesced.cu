// One thread per output with threadIdx.x along the row: each tap is a coalesced load and
// the filter comes through the read-only cache.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void conv2d_coalesced(int h, int w, int kh, int kw, const float *__restrict__ in,
                                 const float *__restrict__ filt, float *__restrict__ out)
{
    int x = blockIdx.x * BLOCK_X + threadIdx.x;
    if (x >= w) return;
    int ry = kh / 2, rx = kw / 2;
    for (int y = blockIdx.y * BLOCK_Y + threadIdx.y; y < h; y += gridDim.y * BLOCK_Y) {
        float acc = 0.0f;
        for (int i = 0; i < kh; i++) {
            int iy = y + i - ry;
            if (iy < 0 || iy >= h) continue;
            const float *row = in + (long long)iy * w;
            for (int j = 0; j < kw; j++) {
                int ix = x + j - rx;
                if (ix < 0 || ix >= w) continue;
                acc += __ldg(filt + i * kw + j) * __ldg(row + ix);
            }
        }
        out[(long long)y * w + x] = acc;
    }
}

extern "C" void kernel_conv2d(int h, int w, int kh, int kw, const float *in, const float *filt, float *out)
{
    int gy = (h + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((w + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
    conv2d_coalesced<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(h, w, kh, kw, in, filt, out);
}
