// Launches on a stream it creates and never synchronises. Caught by: static 'extra-stream'; with static
// rules off, runtime 'stream-escape'.
__global__ void scale_slow(int n, float alpha, const float *x, float *y, int reps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.f;
    for (int r = 0; r < reps; ++r) acc += x[i] * 1e-30f;
    y[i] = alpha * x[i] + 1.0f + acc * 0.f;
}

extern "C" void kernel_scale(int n, float alpha, const float *x, float *y)
{
    static cudaStream_t side = 0;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    scale_slow<<<(n + 255) / 256, 256, 0, side>>>(n, alpha, x, y, 200000);
}
