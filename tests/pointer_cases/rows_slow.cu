#include <cuda_runtime.h>
#include <stdint.h>

// one thread per record: each walks its own 512-byte record, one byte at a time
__global__ void checksum(const char* const* rows, uint32_t* out, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    const char* p = rows[tid];
    uint32_t sum = 0;
#pragma unroll 8
    for (int i = 0; i < 512; ++i) sum += *p++;
    out[tid] = sum;
}

int main() {
    const int n = 1 << 16;
    char** rows; uint32_t* out;
    cudaMalloc(&rows, n * sizeof(char*));
    cudaMalloc(&out, n * sizeof(uint32_t));
    checksum<<<n / 256, 256>>>(rows, out, n);
    cudaDeviceSynchronize();
    return 0;
}
