// Textbook first attempt: one element per thread, shared-memory tree with interleaved
// addressing (divergent modulo test, bank conflicts), one atomicAdd per block.
#define BLOCK_SIZE 256

__global__ void reduce_naive(long long n, const float *x, float *out)
{
    __shared__ float s[BLOCK_SIZE];
    long long i = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = 1; stride < BLOCK_SIZE; stride *= 2) {
        if (threadIdx.x % (2 * stride) == 0)
            s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, s[0]);
}

extern "C" void kernel_reduction(long n, const float *x, float *out)
{
    cudaMemsetAsync(out, 0, sizeof(float), 0);
    if (n <= 0) return;
    reduce_naive<<<(unsigned)((n + BLOCK_SIZE - 1) / BLOCK_SIZE), BLOCK_SIZE>>>(n, x, out);
}
