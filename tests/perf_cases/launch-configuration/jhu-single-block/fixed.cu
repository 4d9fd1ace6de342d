#include <cuda_runtime.h>
#define KERNEL_LOOP 1048576
#define THREADS_PER_BLOCK 256

__global__ void saxpy_loop(float* y, const float* x, float a, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = y[i];
    for (int k = 0; k < iters; k++) v = a * x[i] + v;
    y[i] = v;
}

int main() {
    float *x, *y;
    cudaMalloc(&x, KERNEL_LOOP * sizeof(float));
    cudaMalloc(&y, KERNEL_LOOP * sizeof(float));
    const int num_blocks = KERNEL_LOOP / THREADS_PER_BLOCK;
    saxpy_loop<<<num_blocks, THREADS_PER_BLOCK>>>(y, x, 2.0f, 4096);
    cudaDeviceSynchronize();
    return 0;
}
