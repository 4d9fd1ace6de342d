// Direct port: one thread per output element. The x1 kernel walks a row per thread, so a warp's
// loads hit 32 different rows; the x2 kernel's column walk is coalesced across the warp.
#define BLOCK_SIZE 256

__global__ void mvt_x1(int n, float *x1, const float *y_1, const float *A)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float acc = x1[i];
    for (int j = 0; j < n; j++)
        acc += A[(long long)i * n + j] * y_1[j];
    x1[i] = acc;
}

__global__ void mvt_x2(int n, float *x2, const float *y_2, const float *A)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float acc = x2[i];
    for (int j = 0; j < n; j++)
        acc += A[(long long)j * n + i] * y_2[j];
    x2[i] = acc;
}

extern "C" void kernel_mvt(int n, float *x1, float *x2, const float *y_1, const float *y_2, const float *A)
{
    int blocks = (n + BLOCK_SIZE - 1) / BLOCK_SIZE;
    mvt_x1<<<blocks, BLOCK_SIZE>>>(n, x1, y_1, A);
    mvt_x2<<<blocks, BLOCK_SIZE>>>(n, x2, y_2, A);
}
