#include <cuda_runtime.h>
#include <stdint.h>
#define DIGIT_BITS 32

__device__ uint32_t modexp_small(uint32_t b, uint32_t e, uint32_t m) {
    uint64_t r = 1, x = b % m;
    for (int i = 0; i < DIGIT_BITS; i++) {
        if ((e >> i) & 1u) r = (r * x) % m;
        x = (x * x) % m;
    }
    return (uint32_t)r;
}

__device__ uint32_t modexp_generic(const uint32_t* b, const uint32_t* e, uint32_t m, int digits) {
    uint64_t r = 1;
    for (int d = 0; d < digits; d++) {
        uint64_t x = b[d] % m;
        for (int i = 0; i < DIGIT_BITS; i++) {
            if ((e[d] >> i) & 1u) r = (r * x) % m;
            x = (x * x) % m;
        }
    }
    return (uint32_t)r;
}

__global__ void modexp(const uint32_t* base, const uint32_t* exps, const int* bits, uint32_t* out, uint32_t m,
                       int digits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t r;
    if (bits[i] < DIGIT_BITS) {
        r = modexp_small(base[i * digits], exps[i * digits], m);
    } else {
        r = modexp_generic(base + i * digits, exps + i * digits, m, digits);
    }
    out[i] = r;
}

int main() {
    const int n = 1 << 20, digits = 4;
    uint32_t *b, *e, *o; int* bits;
    cudaMalloc(&b, n * digits * sizeof(uint32_t));
    cudaMalloc(&e, n * digits * sizeof(uint32_t));
    cudaMalloc(&o, n * sizeof(uint32_t));
    cudaMalloc(&bits, n * sizeof(int));
    modexp<<<n / 256, 256>>>(b, e, bits, o, 1000000007u, digits, n);
    cudaDeviceSynchronize();
    return 0;
}
