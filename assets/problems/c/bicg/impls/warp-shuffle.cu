// q: a warp per row, coalesced loads, lane sums combined with shuffles.
// s: rows are split into CHUNKs so there is enough parallelism; a 32 x ROWS block reduces its
// ROWS partial column sums in shared memory and atomically adds them into s (zeroed first).
#define WARPS 8
#define ROWS 8
#define CHUNK 256

__global__ void bicg_q(int m, int n, const float *__restrict__ A, const float *__restrict__ p,
                       float *__restrict__ q)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= n) return;  // whole warp leaves together
    const float *a = A + (long long)i * m;
    float acc = 0.f;
    for (int j = lane; j < m; j += 32)
        acc += a[j] * p[j];
    for (int off = 16; off > 0; off >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) q[i] = acc;
}

__global__ void bicg_s(int m, int n, const float *__restrict__ A, const float *__restrict__ r,
                       float *__restrict__ s)
{
    __shared__ float part[ROWS][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int j = blockIdx.x * 32 + tx;
    int i0 = blockIdx.y * CHUNK;
    int i1 = min(i0 + CHUNK, n);
    float acc = 0.f;
    if (j < m)
        for (int i = i0 + ty; i < i1; i += ROWS)
            acc += r[i] * A[(long long)i * m + j];
    part[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && j < m) {
        float total = 0.f;
        for (int k = 0; k < ROWS; k++)
            total += part[k][tx];
        atomicAdd(&s[j], total);
    }
}

extern "C" void kernel_bicg(int m, int n, const float *A, float *s, float *q, const float *p, const float *r)
{
    bicg_q<<<(n + WARPS - 1) / WARPS, WARPS * 32>>>(m, n, A, p, q);
    cudaMemsetAsync(s, 0, (size_t)m * sizeof(float), 0);
    dim3 grid((m + 31) / 32, (n + CHUNK - 1) / CHUNK);
    bicg_s<<<grid, dim3(32, ROWS)>>>(m, n, A, r, s);
}
