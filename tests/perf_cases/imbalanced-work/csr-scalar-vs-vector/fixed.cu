#include <cuda_runtime.h>

__global__ void spmv_csr_vector(int num_rows, const int* ptr, const int* indices, const float* data, const float* x,
                                float* y) {
    int thread_id = blockDim.x * blockIdx.x + threadIdx.x;
    int warp_id = thread_id / 32;
    int lane = thread_id & 31;
    int row = warp_id;
    if (row < num_rows) {
        float dot = 0.0f;
        int row_start = ptr[row];
        int row_end = ptr[row + 1];
        for (int jj = row_start + lane; jj < row_end; jj += 32) dot += data[jj] * x[indices[jj]];
        for (int o = 16; o > 0; o /= 2) dot += __shfl_down_sync(0xffffffff, dot, o);
        if (lane == 0) y[row] = dot;
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
    spmv_csr_vector<<<(rows * 32 + 255) / 256, 256>>>(rows, ptr, idx, val, x, y);
    cudaDeviceSynchronize();
    return 0;
}
