// Scalar CSR: one thread per row. Lanes of a warp walk different rows (uncoalesced loads)
// and the warp waits for its longest row.
#define BLOCK_SIZE 256

__global__ void spmv_scalar(int nrows, const int *row_ptr, const int *col_idx, const float *vals,
                            const float *x, float *y)
{
    int r = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (r >= nrows) return;
    float acc = 0.0f;
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++)
        acc += vals[k] * x[col_idx[k]];
    y[r] = acc;
}

extern "C" void kernel_spmv_csr(int nrows, int ncols, int nnz, const int *row_ptr, const int *col_idx,
                                const float *vals, const float *x, float *y)
{
    if (nrows <= 0) return;
    spmv_scalar<<<(nrows + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(nrows, row_ptr, col_idx, vals, x, y);
}
