#include <cuda_runtime.h>
#include <stdint.h>

// one warp per record: the lanes read neighbouring bytes and combine their sums
__global__ void checksum(const char* const* rows, uint32_t* out, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= n) return;
    const char* p = rows[warp];
    uint32_t sum = 0;
    for (int i = lane; i < 512; i += 32) sum += p[i];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) out[warp] = sum;
}

int main() {
    const int n = 1 << 16;
    char** rows; uint32_t* out;
    cudaMalloc(&rows, n * sizeof(char*));
    cudaMalloc(&out, n * sizeof(uint32_t));
    checksum<<<n * 32 / 256, 256>>>(rows, out, n);
    cudaDeviceSynchronize();
    return 0;
}
