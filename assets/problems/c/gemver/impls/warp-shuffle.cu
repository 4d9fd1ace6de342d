// Rank-2 update with threadIdx.x along rows (coalesced). x: rows split into CHUNKs, a 32 x 8 block
// reduces its partial column sums in shared memory and atomically adds them into x (the first
// chunk also adds z). w: a warp per row, coalesced loads, shuffle reduction.
#define WARPS 8
#define CHUNK 256

__global__ void gemver_update(int n, float *__restrict__ A, const float *__restrict__ u1,
                              const float *__restrict__ v1, const float *__restrict__ u2,
                              const float *__restrict__ v2)
{
    int j = blockIdx.x * 32 + threadIdx.x;
    if (j >= n) return;
    float a = v1[j], b = v2[j];
    for (int i = blockIdx.y * 8 + threadIdx.y; i < n; i += gridDim.y * 8) {
        long long c = (long long)i * n + j;
        A[c] = A[c] + u1[i] * a + u2[i] * b;
    }
}

__global__ void gemver_x(int n, float beta, const float *__restrict__ A, float *__restrict__ x,
                         const float *__restrict__ y, const float *__restrict__ z)
{
    __shared__ float part[8][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.x * 32 + tx;
    int j0 = blockIdx.y * CHUNK;
    int j1 = min(j0 + CHUNK, n);
    float acc = 0.f;
    if (i < n)
        for (int j = j0 + ty; j < j1; j += 8)
            acc += A[(long long)j * n + i] * y[j];
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && i < n) {
        float total = 0.f;
        for (int r = 0; r < 8; r++)
            total += part[r][tx];
        total *= beta;
        if (blockIdx.y == 0) total += z[i];
        atomicAdd(&x[i], total);
    }
}

__global__ void gemver_w(int n, float alpha, const float *__restrict__ A, float *__restrict__ w,
                         const float *__restrict__ x)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= n) return;  // whole warp leaves together
    const float *a = A + (long long)i * n;
    float acc = 0.f;
    for (int j = lane; j < n; j += 32)
        acc += a[j] * x[j];
    for (int off = 16; off > 0; off >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) w[i] += alpha * acc;
}

extern "C" void kernel_gemver(int n, float alpha, float beta, float *A,
                              const float *u1, const float *v1, const float *u2, const float *v2,
                              float *w, float *x, const float *y, const float *z)
{
    int cols = (n + 31) / 32, rows = (n + 7) / 8;
    gemver_update<<<dim3(cols, rows < 65535 ? rows : 65535), dim3(32, 8)>>>(n, A, u1, v1, u2, v2);
    gemver_x<<<dim3(cols, (n + CHUNK - 1) / CHUNK), dim3(32, 8)>>>(n, beta, A, x, y, z);
    gemver_w<<<(n + WARPS - 1) / WARPS, WARPS * 32>>>(n, alpha, A, w, x);
}
