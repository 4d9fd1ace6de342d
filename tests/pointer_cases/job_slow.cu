#include <cuda_runtime.h>
#include <stdint.h>

struct Job {
    const char* data;
    int record_bytes;
};

// the records come in a struct argument; each thread walks its own
__global__ void checksum(Job job, uint32_t* out, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n) return;
    const char* p = job.data + (size_t)tid * job.record_bytes;
    uint32_t sum = 0;
    for (int i = 0; i < job.record_bytes; ++i) sum += *p++;
    out[tid] = sum;
}

int main() {
    const int n = 1 << 16;
    Job job; char* data; uint32_t* out;
    cudaMalloc(&data, (size_t)n * 512);
    cudaMalloc(&out, n * sizeof(uint32_t));
    job.data = data;
    job.record_bytes = 512;
    checksum<<<n / 256, 256>>>(job, out, n);
    cudaDeviceSynchronize();
    return 0;
}
