#include <cuda_runtime.h>
#include <stdint.h>

// records at offsets the host computed; one thread per record
__global__ void checksum(const uint8_t* data, const size_t* offsets, uint32_t* out, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    const uint8_t* p = data + offsets[tid];
    uint32_t sum = 0;
    for (int i = 0; i < 512; ++i) sum += p[i];
    out[tid] = sum;
}

int main() {
    const int n = 1 << 16;
    uint8_t* data; size_t* offsets; uint32_t* out;
    cudaMalloc(&data, (size_t)n * 512);
    cudaMalloc(&offsets, n * sizeof(size_t));
    cudaMalloc(&out, n * sizeof(uint32_t));
    checksum<<<n / 256, 256>>>(data, offsets, out, n);
    cudaDeviceSynchronize();
    return 0;
}
