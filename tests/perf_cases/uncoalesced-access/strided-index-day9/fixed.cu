#include <cuda_runtime.h>

__global__ void scale_coalesced(float* data, int n) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx < n) data[idx] = data[idx] * 2.0f;
}

int main() {
    const int n = 1 << 24;
    float* d;
    cudaMalloc(&d, (size_t)n * sizeof(float));
    scale_coalesced<<<(n + 255) / 256, 256>>>(d, n);
    cudaDeviceSynchronize();
    return 0;
}
