// One pass over A instead of two. A block of 8 warps owns a tile of CHUNK rows x 32*CPT columns;
// lane l holds columns c0 + l + 32*t (coalesced per t). Per row, the warp shuffle-reduces its
// piece of the row dot and atomically adds it into x1; per column, each lane keeps y_2-weighted
// sums that the 8 warps combine in shared memory before one atomic add into x2.
#define CPT 4
#define CHUNK 128
#define WARPS 8

__global__ void __launch_bounds__(WARPS * 32) mvt_fused(int n, float *__restrict__ x1, float *__restrict__ x2,
        const float *__restrict__ y_1, const float *__restrict__ y_2, const float *__restrict__ A)
{
    __shared__ float part[WARPS][32 * CPT];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int c0 = blockIdx.x * 32 * CPT;
    int r0 = blockIdx.y * CHUNK;
    int r1 = min(r0 + CHUNK, n);
    float yv[CPT], cacc[CPT];
#pragma unroll
    for (int t = 0; t < CPT; t++) {
        int c = c0 + lane + 32 * t;
        yv[t] = c < n ? y_1[c] : 0.f;
        cacc[t] = 0.f;
    }
    for (int r = r0 + warp; r < r1; r += WARPS) {
        const float *a = A + (long long)r * n;
        float w = y_2[r], dot = 0.f;
#pragma unroll
        for (int t = 0; t < CPT; t++) {
            int c = c0 + lane + 32 * t;
            float v = c < n ? a[c] : 0.f;
            dot += v * yv[t];
            cacc[t] += v * w;
        }
        for (int off = 16; off > 0; off >>= 1)
            dot += __shfl_down_sync(0xffffffffu, dot, off);
        if (lane == 0) atomicAdd(&x1[r], dot);
    }
#pragma unroll
    for (int t = 0; t < CPT; t++)
        part[warp][lane + 32 * t] = cacc[t];
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * CPT; e += WARPS * 32) {
        int c = c0 + e;
        if (c < n) {
            float total = 0.f;
            for (int k = 0; k < WARPS; k++)
                total += part[k][e];
            atomicAdd(&x2[c], total);
        }
    }
}

extern "C" void kernel_mvt(int n, float *x1, float *x2, const float *y_1, const float *y_2, const float *A)
{
    dim3 grid((n + 32 * CPT - 1) / (32 * CPT), (n + CHUNK - 1) / CHUNK);
    mvt_fused<<<grid, WARPS * 32>>>(n, x1, x2, y_1, y_2, A);
}
