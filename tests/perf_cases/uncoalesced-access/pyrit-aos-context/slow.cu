#include <cuda_runtime.h>
#include <stdint.h>

struct sha1_ctx {
    uint32_t h0, h1, h2, h3, h4;
};

__global__ void sha1_round(const sha1_ctx* in, sha1_ctx* out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    sha1_ctx c = in[idx];
    uint32_t t = ((c.h0 << 5) | (c.h0 >> 27)) + (c.h1 ^ c.h2 ^ c.h3) + c.h4 + 0x5A827999u;
    out[idx].h0 = t;
    out[idx].h1 = c.h0;
    out[idx].h2 = (c.h1 << 30) | (c.h1 >> 2);
    out[idx].h3 = c.h2;
    out[idx].h4 = c.h3;
}

int main() {
    const int n = 1 << 20;
    sha1_ctx *a, *b;
    cudaMalloc(&a, n * sizeof(sha1_ctx));
    cudaMalloc(&b, n * sizeof(sha1_ctx));
    sha1_round<<<n / 256, 256>>>(a, b, n);
    cudaDeviceSynchronize();
    return 0;
}
