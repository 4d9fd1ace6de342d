#include <cuda_runtime.h>

__global__ void gather(const float* table, const int* idx, float* out, int n, int dim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int row = i / dim, col = i % dim;
    out[i] = table[idx[row] * dim + col];
}

int main() {
    const int rows = 4096, dim = 1024, n = rows * dim;
    float *t, *o; int* idx;
    cudaMalloc(&t, 32768 * dim * sizeof(float));
    cudaMalloc(&idx, rows * sizeof(int));
    cudaMalloc(&o, n * sizeof(float));
    gather<<<(n + 255) / 256, 256>>>(t, idx, o, n, dim);
    cudaDeviceSynchronize();
    return 0;
}
