// Grid-stride accumulation in registers (grid sized to the GPU), then a warp-shuffle
// tree, one shared slot per warp, and one atomicAdd per block.
#define BLOCK_SIZE 256
#define BLOCKS_PER_SM 8
#define FULL 0xffffffffu

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(FULL, v, d);
    return v;
}

__global__ void reduce_shfl(long long n, const float *__restrict__ x, float *__restrict__ out)
{
    __shared__ float ws[BLOCK_SIZE / 32];
    float acc = 0.0f;
    for (long long i = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x; i < n; i += (long long)gridDim.x * BLOCK_SIZE)
        acc += __ldg(x + i);
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0)
        ws[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = warp_sum(threadIdx.x < BLOCK_SIZE / 32 ? ws[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0)
            atomicAdd(out, v);
    }
}

extern "C" void kernel_reduction(long n, const float *x, float *out)
{
    cudaMemsetAsync(out, 0, sizeof(float), 0);
    if (n <= 0) return;
    int dev, sms;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    long long blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (blocks > (long long)sms * BLOCKS_PER_SM) blocks = (long long)sms * BLOCKS_PER_SM;
    reduce_shfl<<<(unsigned)blocks, BLOCK_SIZE>>>(n, x, out);
}
