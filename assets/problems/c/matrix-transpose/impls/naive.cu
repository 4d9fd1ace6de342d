// One thread per element: reads along a row are coalesced, writes stride by `rows`.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void transpose_naive(int rows, int cols, const float *__restrict__ in, float *__restrict__ out)
{
    int c = blockIdx.x * BLOCK_X + threadIdx.x;
    for (int r = blockIdx.y * BLOCK_Y + threadIdx.y; r < rows; r += gridDim.y * BLOCK_Y)
        if (c < cols)
            out[(long long)c * rows + r] = in[(long long)r * cols + c];
}

extern "C" void kernel_transpose(int rows, int cols, const float *in, float *out)
{
    int gy = (rows + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((cols + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535);
    transpose_naive<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(rows, cols, in, out);
}
