#include <cuda_runtime.h>
#include <stdint.h>

// one warp per record
__global__ void checksum(const uint8_t* data, const size_t* offsets, uint32_t* out, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= n) return;
    const uint8_t* p = data + offsets[warp];
    uint32_t sum = 0;
    for (int i = lane; i < 512; i += 32) sum += p[i];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) out[warp] = sum;
}

int main() {
    const int n = 1 << 16;
    uint8_t* data; size_t* offsets; uint32_t* out;
    cudaMalloc(&data, (size_t)n * 512);
    cudaMalloc(&offsets, n * sizeof(size_t));
    cudaMalloc(&out, n * sizeof(uint32_t));
    checksum<<<n * 32 / 256, 256>>>(data, offsets, out, n);
    cudaDeviceSynchronize();
    return 0;
}
