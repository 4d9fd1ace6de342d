#include <cuda_runtime.h>
#define UNROLL 8

__global__ void onerank_reduce(const float* src, float* dst, float scale, long n) {
    const long tid = threadIdx.x;
    const long tn = blockDim.x;
    for (long base = blockIdx.x * tn * UNROLL; base < n; base += (long)gridDim.x * tn * UNROLL) {
        float v[UNROLL];
#pragma unroll 1
        for (int u = 0; u < UNROLL; u++) v[u] = src[base + u * tn + tid];
#pragma unroll 1
        for (int u = 0; u < UNROLL; u++) dst[base + u * tn + tid] = v[u] * scale;
    }
}

int main() {
    const long n = 1L << 26;
    float *a, *b;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    onerank_reduce<<<1024, 512>>>(a, b, 0.5f, n);
    cudaDeviceSynchronize();
    return 0;
}
