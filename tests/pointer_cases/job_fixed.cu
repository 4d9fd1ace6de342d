#include <cuda_runtime.h>
#include <stdint.h>

struct Job {
    const char* data;
    int record_bytes;
};

// one warp per record
__global__ void checksum(Job job, uint32_t* out, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= n) return;
    const char* p = job.data + (size_t)warp * job.record_bytes;
    uint32_t sum = 0;
    for (int i = lane; i < job.record_bytes; i += 32) sum += p[i];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) out[warp] = sum;
}

int main() {
    const int n = 1 << 16;
    Job job; char* data; uint32_t* out;
    cudaMalloc(&data, (size_t)n * 512);
    cudaMalloc(&out, n * sizeof(uint32_t));
    job.data = data;
    job.record_bytes = 512;
    checksum<<<n * 32 / 256, 256>>>(job, out, n);
    cudaDeviceSynchronize();
    return 0;
}
