#include <cuda_runtime.h>
#include <stdint.h>

// one array per context word: word w of thread idx at w * n + idx
__global__ void sha1_round(const uint32_t* in, uint32_t* out, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    uint32_t h0 = in[idx], h1 = in[n + idx], h2 = in[2 * n + idx], h3 = in[3 * n + idx], h4 = in[4 * n + idx];
    uint32_t t = ((h0 << 5) | (h0 >> 27)) + (h1 ^ h2 ^ h3) + h4 + 0x5A827999u;
    out[idx] = t;
    out[n + idx] = h0;
    out[2 * n + idx] = (h1 << 30) | (h1 >> 2);
    out[3 * n + idx] = h2;
    out[4 * n + idx] = h3;
}

int main() {
    const int n = 1 << 20;
    uint32_t *a, *b;
    cudaMalloc(&a, 5 * n * sizeof(uint32_t));
    cudaMalloc(&b, 5 * n * sizeof(uint32_t));
    sha1_round<<<n / 256, 256>>>(a, b, n);
    cudaDeviceSynchronize();
    return 0;
}
