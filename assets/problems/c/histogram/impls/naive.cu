// One thread per element, one global atomic per element: hot bins serialize in L2.
#define BLOCK_SIZE 256

__global__ void hist_naive(int n, const int *data, int *bins)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1);
}

extern "C" void kernel_histogram(int n, const int *data, int *bins)
{
    cudaMemsetAsync(bins, 0, 256 * sizeof(int), 0);
    if (n > 0)
        hist_naive<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(n, data, bins);
}
