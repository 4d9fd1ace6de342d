#include <cuda_runtime.h>

__global__ void reduce1(const int* g_idata, int* g_odata) {
    extern __shared__ int sdata[];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = g_idata[i];
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

int main() {
    const int n = 1 << 22;
    int *a, *b;
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, (n / 256) * sizeof(int));
    reduce1<<<n / 256, 256, 256 * sizeof(int)>>>(a, b);
    cudaDeviceSynchronize();
    return 0;
}
