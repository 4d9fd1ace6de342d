// The rank-2 update and x += beta*A^T*y both sweep A, so one kernel does both: a block of WARPS
// warps owns CHUNK rows x 32*CPT columns, updates and stores each A element and folds it into
// per-lane column sums, which the warps combine in shared memory before one atomic add into x
// (the first row chunk also adds z). w needs the final x, so it stays a separate warp-per-row pass.
#define CPT 4
#define CHUNK 128
#define WARPS 8

__global__ void __launch_bounds__(WARPS * 32) gemver_update_x(int n, float beta, float *__restrict__ A,
        const float *__restrict__ u1, const float *__restrict__ v1, const float *__restrict__ u2,
        const float *__restrict__ v2, float *__restrict__ x, const float *__restrict__ y,
        const float *__restrict__ z)
{
    __shared__ float part[WARPS][32 * CPT];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int c0 = blockIdx.x * 32 * CPT;
    int r0 = blockIdx.y * CHUNK;
    int r1 = min(r0 + CHUNK, n);
    float a1[CPT], a2[CPT], acc[CPT];
#pragma unroll
    for (int t = 0; t < CPT; t++) {
        int c = c0 + lane + 32 * t;
        a1[t] = c < n ? v1[c] : 0.f;
        a2[t] = c < n ? v2[c] : 0.f;
        acc[t] = 0.f;
    }
    for (int r = r0 + warp; r < r1; r += WARPS) {
        float *row = A + (long long)r * n;
        float p = u1[r], q = u2[r], yr = y[r];
#pragma unroll
        for (int t = 0; t < CPT; t++) {
            int c = c0 + lane + 32 * t;
            if (c < n) {
                float v = row[c] + p * a1[t] + q * a2[t];
                row[c] = v;
                acc[t] += v * yr;
            }
        }
    }
#pragma unroll
    for (int t = 0; t < CPT; t++)
        part[warp][lane + 32 * t] = acc[t];
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * CPT; e += WARPS * 32) {
        int c = c0 + e;
        if (c < n) {
            float total = 0.f;
            for (int k = 0; k < WARPS; k++)
                total += part[k][e];
            total *= beta;
            if (blockIdx.y == 0) total += z[c];
            atomicAdd(&x[c], total);
        }
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
    dim3 grid((n + 32 * CPT - 1) / (32 * CPT), (n + CHUNK - 1) / CHUNK);
    gemver_update_x<<<grid, WARPS * 32>>>(n, beta, A, u1, v1, u2, v2, x, y, z);
    gemver_w<<<(n + WARPS - 1) / WARPS, WARPS * 32>>>(n, alpha, A, w, x);
}
