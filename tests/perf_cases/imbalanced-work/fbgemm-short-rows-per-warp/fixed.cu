#include <cuda_runtime.h>

__device__ int row_of(const int* out_offsets, int nrows, int i) {
    int lo = 0, hi = nrows;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (out_offsets[mid] <= i) lo = mid; else hi = mid;
    }
    return lo;
}

__global__ void permute_flat(const int* offsets, const int* perm, const int* out_offsets, const float* in,
                             float* out, int nrows, int nnz) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nnz) return;
    const int row = row_of(out_offsets, nrows, i);
    out[i] = in[offsets[perm[row]] + (i - out_offsets[row])];
}

int main() {
    const int nrows = 1 << 22, nnz = 5 * nrows;
    int *off, *perm, *ooff; float *in, *out;
    cudaMalloc(&off, (nrows + 1) * sizeof(int));
    cudaMalloc(&perm, nrows * sizeof(int));
    cudaMalloc(&ooff, (nrows + 1) * sizeof(int));
    cudaMalloc(&in, nnz * sizeof(float));
    cudaMalloc(&out, nnz * sizeof(float));
    permute_flat<<<(nnz + 255) / 256, 256>>>(off, perm, ooff, in, out, nrows, nnz);
    cudaDeviceSynchronize();
    return 0;
}
