#include <cuda_runtime.h>

__global__ void spmv_csr_scalar(int num_rows, const int* ptr, const int* indices, const float* data, const float* x,
                                float* y) {
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row < num_rows) {
        float dot = 0.0f;
        int row_start = ptr[row];
        int row_end = ptr[row + 1];
        for (int jj = row_start; jj < row_end; jj++) dot += data[jj] * x[indices[jj]];
        y[row] = dot;
    }
}

int main() {
    const int rows = 1 << 20, nnz = 16 * rows;
    int *ptr, *idx; float *val, *x, *y;
    cudaMalloc(&ptr, (rows + 1) * sizeof(int));
    cudaMalloc(&idx, nnz * sizeof(int));
    cudaMalloc(&val, nnz * sizeof(float));
    cudaMalloc(&x, rows * sizeof(float));
    cudaMalloc(&y, rows * sizeof(float));
    spmv_csr_scalar<<<(rows + 255) / 256, 256>>>(rows, ptr, idx, val, x, y);
    cudaDeviceSynchronize();
    return 0;
}
