// C[i][j] = dot(A row i, A row j): both operands are row tiles of A loaded along k (coalesced).
// The +1 padding keeps the transposed read Aj[tx][k] free of bank conflicts. Blocks entirely
// above the diagonal exit at once.
#define TILE 16

__global__ void syrk_tiled(int n, int m, float alpha, float beta, float *__restrict__ C,
                           const float *__restrict__ A)
{
    int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    if (j0 > i0 + TILE - 1) return;  // uniform per block
    __shared__ float Ai[TILE][TILE + 1];
    __shared__ float Aj[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = i0 + ty, j = j0 + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < m; k0 += TILE) {
        int k = k0 + tx;
        Ai[ty][tx] = (i0 + ty < n && k < m) ? A[(long long)(i0 + ty) * m + k] : 0.f;
        Aj[ty][tx] = (j0 + ty < n && k < m) ? A[(long long)(j0 + ty) * m + k] : 0.f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; kk++)
            acc += Ai[ty][kk] * Aj[tx][kk];
        __syncthreads();
    }
    if (i < n && j <= i) {
        long long c = (long long)i * n + j;
        C[c] = alpha * acc + beta * C[c];
    }
}

extern "C" void kernel_syrk(int n, int m, float alpha, float beta, float *C, const float *A)
{
    int t = (n + TILE - 1) / TILE;
    syrk_tiled<<<dim3(t, t), dim3(TILE, TILE)>>>(n, m, alpha, beta, C, A);
}
