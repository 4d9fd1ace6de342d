#include <cuda_runtime.h>
#define ROWS 16
#define COLS 16

__global__ void transpose_kernel(const float* inp, float* out, int rows, int cols) {
    __shared__ float data_block[ROWS * (COLS + 1)];
    int r = blockIdx.y * ROWS + threadIdx.y;
    int c = blockIdx.x * COLS + threadIdx.x;
    data_block[threadIdx.y * (COLS + 1) + threadIdx.x] = inp[r * cols + c];
    __syncthreads();
    int orow = blockIdx.x * COLS + threadIdx.y;
    int ocol = blockIdx.y * ROWS + threadIdx.x;
    out[orow * rows + ocol] = data_block[threadIdx.x * (COLS + 1) + threadIdx.y];
}

int main() {
    const int rows = 4096, cols = 4096;
    float *a, *b;
    cudaMalloc(&a, rows * cols * sizeof(float));
    cudaMalloc(&b, rows * cols * sizeof(float));
    dim3 grid(cols / COLS, rows / ROWS), block(COLS, ROWS);
    transpose_kernel<<<grid, block>>>(a, b, rows, cols);
    cudaDeviceSynchronize();
    return 0;
}
