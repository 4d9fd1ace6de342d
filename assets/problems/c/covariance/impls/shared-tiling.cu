// cov = data^T * data / (n - 1): tile (i0, j0) of cov needs columns i0.. and j0.. of data,
// staged TILE rows at a time in shared memory (loads coalesced along the columns). Only tiles on or
// above the diagonal run; each writes its upper-triangle entries and their mirror images.
#define TILE 16

// Column means: a 32 x 8 block owns 32 columns; its 8 thread rows stride over the n rows and are
// combined in shared memory. The centring kernel then subtracts the means in place.
__global__ void cov_mean(int m, int n, float float_n, const float *__restrict__ data, float *__restrict__ mean)
{
    __shared__ float part[8][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int j = blockIdx.x * 32 + tx;
    float s = 0.f;
    if (j < m)
        for (int i = ty; i < n; i += 8)
            s += data[(long long)i * m + j];
    part[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && j < m) {
        float t = 0.f;
        for (int r = 0; r < 8; r++)
            t += part[r][tx];
        mean[j] = t / float_n;
    }
}

__global__ void cov_center(int m, int n, float *__restrict__ data, const float *__restrict__ mean)
{
    int j = blockIdx.x * 32 + threadIdx.x;
    int i = blockIdx.y * 8 + threadIdx.y;
    if (i < n && j < m)
        data[(long long)i * m + j] -= mean[j];
}

__global__ void cov_tiled(int m, int n, float float_n, const float *__restrict__ data, float *__restrict__ cov)
{
    int i0 = blockIdx.y * TILE, j0 = blockIdx.x * TILE;
    if (j0 + TILE - 1 < i0) return;  // uniform per block: tile wholly below the diagonal
    __shared__ float Di[TILE][TILE];
    __shared__ float Dj[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int i = i0 + ty, j = j0 + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        int k = k0 + ty;
        Di[ty][tx] = (k < n && i0 + tx < m) ? data[(long long)k * m + i0 + tx] : 0.f;
        Dj[ty][tx] = (k < n && j < m) ? data[(long long)k * m + j] : 0.f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; kk++)
            acc += Di[kk][ty] * Dj[kk][tx];
        __syncthreads();
    }
    if (i < m && j < m && j >= i) {
        float s = acc / (float_n - 1.0f);
        cov[(long long)i * m + j] = s;
        cov[(long long)j * m + i] = s;
    }
}

extern "C" void kernel_covariance(int m, int n, float float_n, float *data, float *cov, float *mean)
{
    cov_mean<<<(m + 31) / 32, dim3(32, 8)>>>(m, n, float_n, data, mean);
    cov_center<<<dim3((m + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(m, n, data, mean);
    int t = (m + TILE - 1) / TILE;
    cov_tiled<<<dim3(t, t), dim3(TILE, TILE)>>>(m, n, float_n, data, cov);
}
