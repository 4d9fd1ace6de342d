// Sub-warp CSR: a group of G lanes per row, G the power of two (2..32) nearest above the
// mean row length, so short rows do not leave most of a warp idle while loads stay
// coalesced within each group. Groups reduce with width-G shuffles.
#define BLOCK_SIZE 256
#define FULL 0xffffffffu

__global__ void spmv_group(int nrows, int g, const int *__restrict__ row_ptr, const int *__restrict__ col_idx,
                           const float *__restrict__ vals, const float *__restrict__ x, float *__restrict__ y)
{
    const long long t = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    const long long row = t / g;
    const int sub = threadIdx.x & (g - 1);
    // rows past the end run an empty loop but stay for the shuffles (full mask)
    int b = 0, e = 0;
    if (row < nrows) {
        b = __ldg(row_ptr + row);
        e = __ldg(row_ptr + row + 1);
    }
    float acc = 0.0f;
    for (int k = b + sub; k < e; k += g)
        acc += __ldg(vals + k) * __ldg(x + __ldg(col_idx + k));
    for (int d = g / 2; d > 0; d >>= 1)
        acc += __shfl_down_sync(FULL, acc, d, g);
    if (sub == 0 && row < nrows)
        y[row] = acc;
}

extern "C" void kernel_spmv_csr(int nrows, int ncols, int nnz, const int *row_ptr, const int *col_idx,
                                const float *vals, const float *x, float *y)
{
    if (nrows <= 0) return;
    int g = 2;
    while (g < 32 && (long long)g * nrows < nnz)
        g *= 2;
    long long threads = (long long)nrows * g;
    spmv_group<<<(unsigned)((threads + BLOCK_SIZE - 1) / BLOCK_SIZE), BLOCK_SIZE>>>(nrows, g, row_ptr, col_idx, vals, x, y);
}
