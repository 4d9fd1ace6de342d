// Direct port of the loop nest: one thread per (i, j) column walks k serially. Adjacent
// threads are a whole row apart, so loads are uncoalesced, and only n^2 threads exist.
#define BLOCK_SIZE 256

__global__ void heat_sweep_naive(int n, const float *src, float *dst)
{
    long long t = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    long long m = n - 2;
    if (t >= m * m) return;
    int i = 1 + (int)(t / m), j = 1 + (int)(t % m);
    long long n2 = (long long)n * n;
    for (int k = 1; k < n - 1; k++) {
        long long c = i * n2 + (long long)j * n + k;
        dst[c] = 0.125f * (src[c + n2] - 2.0f * src[c] + src[c - n2])
               + 0.125f * (src[c + n] - 2.0f * src[c] + src[c - n])
               + 0.125f * (src[c + 1] - 2.0f * src[c] + src[c - 1])
               + src[c];
    }
}

extern "C" void kernel_heat_3d(int tsteps, int n, float *A, float *B)
{
    if (n < 3) return;
    long long m = n - 2;
    int blocks = (int)((m * m + BLOCK_SIZE - 1) / BLOCK_SIZE);
    for (int t = 0; t < tsteps; t++) {
        heat_sweep_naive<<<blocks, BLOCK_SIZE>>>(n, A, B);
        heat_sweep_naive<<<blocks, BLOCK_SIZE>>>(n, B, A);
    }
}
