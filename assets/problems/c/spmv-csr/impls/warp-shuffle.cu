// Vector CSR: one warp per row. Lanes stride through the row together (coalesced loads
// of col_idx/vals), x through the read-only cache, and a shuffle tree sums the lanes.
#define BLOCK_SIZE 256
#define FULL 0xffffffffu

__global__ void spmv_warp(int nrows, const int *__restrict__ row_ptr, const int *__restrict__ col_idx,
                          const float *__restrict__ vals, const float *__restrict__ x, float *__restrict__ y)
{
    const long long warp = ((long long)blockIdx.x * BLOCK_SIZE + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (warp >= nrows) return;   // whole warp leaves together
    const int r = (int)warp;
    const int b = __ldg(row_ptr + r), e = __ldg(row_ptr + r + 1);
    float acc = 0.0f;
    for (int k = b + lane; k < e; k += 32)
        acc += __ldg(vals + k) * __ldg(x + __ldg(col_idx + k));
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        acc += __shfl_down_sync(FULL, acc, d);
    if (lane == 0)
        y[r] = acc;
}

extern "C" void kernel_spmv_csr(int nrows, int ncols, int nnz, const int *row_ptr, const int *col_idx,
                                const float *vals, const float *x, float *y)
{
    if (nrows <= 0) return;
    long long threads = (long long)nrows * 32;
    spmv_warp<<<(unsigned)((threads + BLOCK_SIZE - 1) / BLOCK_SIZE), BLOCK_SIZE>>>(nrows, row_ptr, col_idx, vals, x, y);
}
