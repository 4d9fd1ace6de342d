void kernel_spmv_csr(int nrows, int ncols, int nnz, const int *row_ptr, const int *col_idx,
                     const float *vals, const float *x, float *y)
{
    (void)ncols;
    (void)nnz;
    for (int r = 0; r < nrows; r++) {
        float acc = 0.0f;
        for (int k = row_ptr[r]; k < row_ptr[r + 1]; k++)
            acc += vals[k] * x[col_idx[k]];
        y[r] = acc;
    }
}
