// Launches with an invalid block size (2048 threads): the launch fails, nothing is written.
// Verdict: runtime_error naming the CUDA error (read through the library's own runtime).
__global__ void scale_k(int n, float alpha, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + 1.0f;
}

extern "C" void kernel_scale(int n, float alpha, const float *x, float *y)
{
    scale_k<<<(n + 2047) / 2048, 2048>>>(n, alpha, x, y);
}
