// One pass over A instead of two. A block of 8 warps owns a tile of CHUNK rows x 32*CPT columns;
// lane l holds columns c0 + l + 32*t (coalesced per t). Per row, the warp shuffle-reduces its
// piece of the row dot and atomically adds it into q; per column, each lane keeps r-weighted sums
// that the 8 warps combine in shared memory before one atomic add into s. s and q start at zero.
#define CPT 4
#define CHUNK 128
#define WARPS 8

__global__ void __launch_bounds__(WARPS * 32) bicg_fused(int m, int n, const float *__restrict__ A,
        float *__restrict__ s, float *__restrict__ q, const float *__restrict__ p, const float *__restrict__ r)
{
    __shared__ float part[WARPS][32 * CPT];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int c0 = blockIdx.x * 32 * CPT;
    int i0 = blockIdx.y * CHUNK;
    int i1 = min(i0 + CHUNK, n);
    float pv[CPT], sacc[CPT];
#pragma unroll
    for (int t = 0; t < CPT; t++) {
        int c = c0 + lane + 32 * t;
        pv[t] = c < m ? p[c] : 0.f;
        sacc[t] = 0.f;
    }
    for (int i = i0 + warp; i < i1; i += WARPS) {
        const float *a = A + (long long)i * m;
        float ri = r[i], qp = 0.f;
#pragma unroll
        for (int t = 0; t < CPT; t++) {
            int c = c0 + lane + 32 * t;
            float v = c < m ? a[c] : 0.f;
            qp += v * pv[t];
            sacc[t] += ri * v;
        }
        for (int off = 16; off > 0; off >>= 1)
            qp += __shfl_down_sync(0xffffffffu, qp, off);
        if (lane == 0) atomicAdd(&q[i], qp);
    }
#pragma unroll
    for (int t = 0; t < CPT; t++)
        part[warp][lane + 32 * t] = sacc[t];
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * CPT; e += WARPS * 32) {
        int c = c0 + e;
        if (c < m) {
            float total = 0.f;
            for (int w = 0; w < WARPS; w++)
                total += part[w][e];
            atomicAdd(&s[c], total);
        }
    }
}

extern "C" void kernel_bicg(int m, int n, const float *A, float *s, float *q, const float *p, const float *r)
{
    cudaMemsetAsync(s, 0, (size_t)m * sizeof(float), 0);
    cudaMemsetAsync(q, 0, (size_t)n * sizeof(float), 0);
    dim3 grid((m + 32 * CPT - 1) / (32 * CPT), (n + CHUNK - 1) / CHUNK);
    bicg_fused<<<grid, WARPS * 32>>>(m, n, A, s, q, p, r);
}
