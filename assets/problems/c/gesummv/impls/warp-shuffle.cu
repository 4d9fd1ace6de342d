// One warp per row: the 32 lanes read consecutive elements (coalesced) and their partial sums are
// combined with shuffles.
#define WARPS 8

__global__ void gesummv_warp(int n, float alpha, float beta, const float *__restrict__ A,
                             const float *__restrict__ B, float *__restrict__ tmp,
                             const float *__restrict__ x, float *__restrict__ y)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= n) return;  // whole warp leaves together
    const float *a = A + (long long)i * n, *b = B + (long long)i * n;
    float t = 0.f, u = 0.f;
    for (int j = lane; j < n; j += 32) {
        float xj = x[j];
        t += a[j] * xj;
        u += b[j] * xj;
    }
    for (int off = 16; off > 0; off >>= 1) {
        t += __shfl_down_sync(0xffffffffu, t, off);
        u += __shfl_down_sync(0xffffffffu, u, off);
    }
    if (lane == 0) {
        tmp[i] = t;
        y[i] = alpha * t + beta * u;
    }
}

extern "C" void kernel_gesummv(int n, float alpha, float beta, const float *A, const float *B,
                               float *tmp, const float *x, float *y)
{
    gesummv_warp<<<(n + WARPS - 1) / WARPS, WARPS * 32>>>(n, alpha, beta, A, B, tmp, x, y);
}
