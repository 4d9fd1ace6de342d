// Direct port: one thread per C[i][j], j <= i, with threadIdx.x over j. Every thread walks its own
// row of A along k, so a warp's A[j][k] loads hit 32 different rows.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void syrk_naive(int n, int m, float alpha, float beta, float *C, const float *A)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= n || j > i) return;
    long long c = (long long)i * n + j;
    float acc = C[c] * beta;
    for (int k = 0; k < m; k++)
        acc += alpha * A[(long long)i * m + k] * A[(long long)j * m + k];
    C[c] = acc;
}

extern "C" void kernel_syrk(int n, int m, float alpha, float beta, float *C, const float *A)
{
    dim3 grid((n + BLOCK_X - 1) / BLOCK_X, (n + BLOCK_Y - 1) / BLOCK_Y);
    syrk_naive<<<grid, dim3(BLOCK_X, BLOCK_Y)>>>(n, m, alpha, beta, C, A);
}
