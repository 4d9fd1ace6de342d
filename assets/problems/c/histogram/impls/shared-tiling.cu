// Privatized histogram: each block counts into its own 256 bins in shared memory over a
// grid-stride loop, then merges with one global atomic per bin. Grid sized to the GPU.
#define BLOCK_SIZE 256
#define BLOCKS_PER_SM 4

__global__ void hist_shared(int n, const int *__restrict__ data, int *__restrict__ bins)
{
    __shared__ int local[256];
    for (int b = threadIdx.x; b < 256; b += BLOCK_SIZE)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += gridDim.x * BLOCK_SIZE)
        atomicAdd(&local[data[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += BLOCK_SIZE)
        if (local[b])
            atomicAdd(&bins[b], local[b]);
}

extern "C" void kernel_histogram(int n, const int *data, int *bins)
{
    cudaMemsetAsync(bins, 0, 256 * sizeof(int), 0);
    if (n <= 0) return;
    int dev, sms;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (blocks > sms * BLOCKS_PER_SM) blocks = sms * BLOCKS_PER_SM;
    hist_shared<<<blocks, BLOCK_SIZE>>>(n, data, bins);
}
