// Direct port: per time step one kernel computes B from A and a second A from B, exactly as
// PolyBench's two loops; one thread per interior point.
#define BLOCK_SIZE 256

__global__ void jacobi1d_sweep(int n, const float *in, float *out)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= 1 && i < n - 1)
        out[i] = 0.33333f * (in[i - 1] + in[i] + in[i + 1]);
}

extern "C" void kernel_jacobi_1d(int tsteps, int n, float *A, float *B)
{
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    for (int t = 0; t < tsteps; t++) {
        jacobi1d_sweep<<<blocks, BLOCK_SIZE>>>(n, A, B);
        jacobi1d_sweep<<<blocks, BLOCK_SIZE>>>(n, B, A);
    }
}
