#include <cuda_runtime.h>

__global__ void permute_rows_warp(const int* offsets, const int* perm, const int* out_offsets, const float* in,
                                  float* out, int nrows) {
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= nrows) return;
    const int src = perm[row];
    const int begin = offsets[src], len = offsets[src + 1] - begin;
    for (int k = lane; k < len; k += 32) out[out_offsets[row] + k] = in[begin + k];
}

int main() {
    const int nrows = 1 << 22, nnz = 5 * nrows;
    int *off, *perm, *ooff; float *in, *out;
    cudaMalloc(&off, (nrows + 1) * sizeof(int));
    cudaMalloc(&perm, nrows * sizeof(int));
    cudaMalloc(&ooff, (nrows + 1) * sizeof(int));
    cudaMalloc(&in, nnz * sizeof(float));
    cudaMalloc(&out, nnz * sizeof(float));
    permute_rows_warp<<<nrows / 8, 256>>>(off, perm, ooff, in, out, nrows);
    cudaDeviceSynchronize();
    return 0;
}
