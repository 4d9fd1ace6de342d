// Tiled matmul: each operand element comes from global memory once per tile, not once per output.
// out = alpha * X*Y (+ beta * out when accumulate), X m x k, Y k x n.
#define TILE 16

__global__ void mm_tiled(int m, int n, int k, float alpha, float beta, int accumulate,
                         float *__restrict__ out, const float *__restrict__ X, const float *__restrict__ Y)
{
    __shared__ float Xs[TILE][TILE];
    __shared__ float Ys[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int j = blockIdx.x * TILE + tx;
    int i = blockIdx.y * TILE + ty;
    float acc = 0.f;
    for (int p0 = 0; p0 < k; p0 += TILE) {
        int px = p0 + tx, py = p0 + ty;
        Xs[ty][tx] = (i < m && px < k) ? X[(long long)i * k + px] : 0.f;
        Ys[ty][tx] = (py < k && j < n) ? Y[(long long)py * n + j] : 0.f;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; p++)
            acc += Xs[ty][p] * Ys[p][tx];
        __syncthreads();
    }
    if (i < m && j < n) {
        long long o = (long long)i * n + j;
        out[o] = accumulate ? alpha * acc + beta * out[o] : alpha * acc;
    }
}

extern "C" void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                           float *tmp, const float *A, const float *B, const float *C, float *D)
{
    dim3 block(TILE, TILE);
    dim3 g1((nj + TILE - 1) / TILE, (ni + TILE - 1) / TILE);
    mm_tiled<<<g1, block>>>(ni, nj, nk, alpha, 0.f, 0, tmp, A, B);
    dim3 g2((nl + TILE - 1) / TILE, (ni + TILE - 1) / TILE);
    mm_tiled<<<g2, block>>>(ni, nl, nj, 1.f, beta, 1, D, tmp, C);
}
