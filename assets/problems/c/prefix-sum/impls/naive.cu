// Hillis-Steele scan in global memory: log2(n) passes, each adds the element `off`
// places back (ping-pong between out and a temporary). O(n log n) work and traffic.
#define BLOCK_SIZE 256

__global__ void scan_step(int n, long long off, const int *src, int *dst)
{
    long long i = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i < n)
        dst[i] = src[i] + (i >= off ? src[i - off] : 0);
}

extern "C" void kernel_prefix_sum(int n, const int *in, int *out)
{
    if (n <= 0) return;
    int passes = 0;
    for (long long off = 1; off < n; off <<= 1)
        passes++;
    if (passes == 0) {
        cudaMemcpyAsync(out, in, sizeof(int), cudaMemcpyDeviceToDevice, 0);
        return;
    }
    int *tmp;
    cudaMalloc(&tmp, (size_t)n * sizeof(int));
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    const int *src = in;
    long long off = 1;
    for (int p = 0; p < passes; p++, off <<= 1) {
        int *dst = (passes - 1 - p) % 2 == 0 ? out : tmp;   // the last pass lands in out
        scan_step<<<blocks, BLOCK_SIZE>>>(n, off, src, dst);
        src = dst;
    }
    cudaFree(tmp);
}
