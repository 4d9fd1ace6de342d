// tmp: a warp per row with a shuffle reduction. y: a thread per column alone would leave the GPU
// mostly idle (n threads), so rows are split into CHUNKs: a 32 x ROWS block stages its chunk of tmp
// in shared memory, reduces the ROWS partial sums per column in shared memory and atomically adds
// the result into y (zeroed first).
#define WARPS 8
#define ROWS 8
#define CHUNK 256

__global__ void atax_tmp(int m, int n, const float *__restrict__ A, const float *__restrict__ x,
                         float *__restrict__ tmp)
{
    int lane = threadIdx.x & 31;
    int i = blockIdx.x * WARPS + (threadIdx.x >> 5);
    if (i >= m) return;  // whole warp leaves together
    const float *a = A + (long long)i * n;
    float s = 0.f;
    for (int j = lane; j < n; j += 32)
        s += a[j] * x[j];
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) tmp[i] = s;
}

__global__ void atax_y(int m, int n, const float *__restrict__ A, const float *__restrict__ tmp,
                       float *__restrict__ y)
{
    __shared__ float t[CHUNK];
    __shared__ float part[ROWS][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int j = blockIdx.x * 32 + tx;
    int i0 = blockIdx.y * CHUNK;
    int rows = min(CHUNK, m - i0);
    for (int e = ty * 32 + tx; e < rows; e += 32 * ROWS)
        t[e] = tmp[i0 + e];
    __syncthreads();
    float s = 0.f;
    if (j < n)
        for (int r = ty; r < rows; r += ROWS)
            s += A[(long long)(i0 + r) * n + j] * t[r];
    part[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && j < n) {
        float total = 0.f;
        for (int r = 0; r < ROWS; r++)
            total += part[r][tx];
        atomicAdd(&y[j], total);
    }
}

extern "C" void kernel_atax(int m, int n, const float *A, const float *x, float *y, float *tmp)
{
    atax_tmp<<<(m + WARPS - 1) / WARPS, WARPS * 32>>>(m, n, A, x, tmp);
    cudaMemsetAsync(y, 0, (size_t)n * sizeof(float), 0);
    dim3 grid((n + 31) / 32, (m + CHUNK - 1) / CHUNK);
    atax_y<<<grid, dim3(32, ROWS)>>>(m, n, A, tmp, y);
}
