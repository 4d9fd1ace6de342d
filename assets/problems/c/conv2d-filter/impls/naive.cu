// Direct port: one thread per output, threadIdx.x over rows (uncoalesced), filter and
// input read from global memory with a bounds test per tap.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void conv2d_naive(int h, int w, int kh, int kw, const float *in, const float *filt, float *out)
{
    int y = blockIdx.x * BLOCK_X + threadIdx.x;
    if (y >= h) return;
    int ry = kh / 2, rx = kw / 2;
    for (int x = blockIdx.y * BLOCK_Y + threadIdx.y; x < w; x += gridDim.y * BLOCK_Y) {
        float acc = 0.0f;
        for (int i = 0; i < kh; i++) {
            int iy = y + i - ry;
            if (iy < 0 || iy >= h) continue;
            for (int j = 0; j < kw; j++) {
                int ix = x + j - rx;
                if (ix < 0 || ix >= w) continue;
                acc += filt[i * kw + j] * in[(long long)iy * w + ix];
            }
        }
        out[(long long)y * w + x] = acc;
    }
}

extern "C" void kernel_conv2d(int h, int w, int kh, int kw, const float *in, const float *filt, float *out)
{
    int gy = (w + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((h + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
    conv2d_naive<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(h, w, kh, kw, in, filt, out);
}
