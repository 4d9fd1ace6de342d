#include <cuda_runtime.h>

__global__ void test_divergence(float* dst, const float* src) {
    unsigned index = blockDim.x * blockIdx.x + threadIdx.x;
    float value = 0.0f;
    if (index % 2 == 0) {
        value = sinf(src[index]) * cosf(src[index]) + sqrtf(fabsf(src[index]));
        value = value * value + expf(-value);
    } else {
        value = cosf(src[index]) * logf(fabsf(src[index]) + 1.0f) - sqrtf(fabsf(src[index]));
        value = value * 0.5f + tanhf(value);
    }
    dst[index] = value;
}

int main() {
    const int n = 1 << 24;
    float *a, *b;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    test_divergence<<<n / 256, 256>>>(b, a);
    cudaDeviceSynchronize();
    return 0;
}
