// x1: a warp per row, coalesced loads, lane sums combined with shuffles.
// x2: rows are split into CHUNKs so there is enough parallelism; a 32 x ROWS block reduces its
// ROWS partial column sums in shared memory and atomically adds them into x2.
#define WARPS 8
#define ROWS 8
#define CHUNK 256

__global__ void mvt_x1(int n, float *__restrict__ x1, const float *__restrict__ y_1, const float *__restrict__ A)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= n) return;  // whole warp leaves together
    const float *a = A + (long long)i * n;
    float acc = 0.f;
    for (int j = lane; j < n; j += 32)
        acc += a[j] * y_1[j];
    for (int off = 16; off > 0; off >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) x1[i] += acc;
}

__global__ void mvt_x2(int n, float *__restrict__ x2, const float *__restrict__ y_2, const float *__restrict__ A)
{
    __shared__ float part[ROWS][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = blockIdx.x * 32 + tx;
    int j0 = blockIdx.y * CHUNK;
    int j1 = min(j0 + CHUNK, n);
    float acc = 0.f;
    if (i < n)
        for (int j = j0 + ty; j < j1; j += ROWS)
            acc += A[(long long)j * n + i] * y_2[j];
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && i < n) {
        float total = 0.f;
        for (int k = 0; k < ROWS; k++)
            total += part[k][tx];
        atomicAdd(&x2[i], total);
    }
}

extern "C" void kernel_mvt(int n, float *x1, float *x2, const float *y_1, const float *y_2, const float *A)
{
    mvt_x1<<<(n + WARPS - 1) / WARPS, WARPS * 32>>>(n, x1, y_1, A);
    dim3 grid((n + 31) / 32, (n + CHUNK - 1) / CHUNK);
    mvt_x2<<<grid, dim3(32, ROWS)>>>(n, x2, y_2, A);
}
