#include <cuda_runtime.h>
#define VEC 4

__global__ void misaligned_copy(const float* T1, float* T0, int shift, int n) {
    float T4[VEC];
    const int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (base + VEC > n) return;
#pragma unroll 1
    for (int k = 0; k < shift; ++k) T4[k] = T1[base + k];
#pragma unroll 1
    for (int k = shift; k < VEC; ++k) T4[k] = 2.0f * T1[base + k];
    float s = 0.0f;
    for (int k = 0; k < VEC; ++k) s += T4[k];
    T0[base / VEC] = s;
}

int main() {
    const int n = 1 << 24;
    float *a, *b;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n / VEC * sizeof(float));
    misaligned_copy<<<n / VEC / 256, 256>>>(a, b, 3, n);
    cudaDeviceSynchronize();
    return 0;
}
