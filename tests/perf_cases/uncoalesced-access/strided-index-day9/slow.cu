#include <cuda_runtime.h>

__global__ void scale_strided(float* data, int n, int stride) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    int index = idx * stride;
    if (index < n) data[index] = data[index] * 2.0f;
}

int main() {
    const int n = 1 << 24;
    const int stride = 32;
    float* d;
    cudaMalloc(&d, (size_t)n * stride * sizeof(float));
    scale_strided<<<(n + 255) / 256, 256>>>(d, n * stride, stride);
    cudaDeviceSynchronize();
    return 0;
}
