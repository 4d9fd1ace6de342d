// cov = data^T * data / (n - 1) as a register-tiled product: BM x BN tiles on or above the
// diagonal, BK rows of data staged per step (loads coalesced along the columns), each thread
// accumulating a TM x TN tile with interleaved rows/cols. Upper entries and mirrors are written.
#define BM 64
#define BN 64
#define BK 8
#define TM 4
#define TN 4
#define NT ((BM / TM) * (BN / TN))

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

__global__ void __launch_bounds__(NT) cov_regtile(int m, int n, float float_n, const float *__restrict__ data,
                                                  float *__restrict__ cov)
{
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    if (col0 + BN - 1 < row0) return;  // uniform per block: tile wholly below the diagonal
    __shared__ float Xs[BK][BM];
    __shared__ float Ys[BK][BN];
    int tid = threadIdx.x;
    int tr = tid / (BN / TN), tc = tid % (BN / TN);
    float acc[TM][TN];
#pragma unroll
    for (int a = 0; a < TM; a++)
#pragma unroll
        for (int b = 0; b < TN; b++)
            acc[a][b] = 0.f;

    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int e = tid; e < BK * BM; e += NT) {
            int k = e / BM, r = e % BM;
            int gk = k0 + k, gi = row0 + r;
            Xs[k][r] = (gk < n && gi < m) ? data[(long long)gk * m + gi] : 0.f;
        }
        for (int e = tid; e < BK * BN; e += NT) {
            int k = e / BN, c = e % BN;
            int gk = k0 + k, gj = col0 + c;
            Ys[k][c] = (gk < n && gj < m) ? data[(long long)gk * m + gj] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float xa[TM], yb[TN];
#pragma unroll
            for (int a = 0; a < TM; a++)
                xa[a] = Xs[k][tr + a * (BM / TM)];
#pragma unroll
            for (int b = 0; b < TN; b++)
                yb[b] = Ys[k][tc + b * (BN / TN)];
#pragma unroll
            for (int a = 0; a < TM; a++)
#pragma unroll
                for (int b = 0; b < TN; b++)
                    acc[a][b] += xa[a] * yb[b];
        }
        __syncthreads();
    }
    float scale = float_n - 1.0f;
#pragma unroll
    for (int a = 0; a < TM; a++) {
        int gi = row0 + tr + a * (BM / TM);
        if (gi >= m) continue;
#pragma unroll
        for (int b = 0; b < TN; b++) {
            int gj = col0 + tc + b * (BN / TN);
            if (gj < m && gj >= gi) {
                float s = acc[a][b] / scale;
                cov[(long long)gi * m + gj] = s;
                cov[(long long)gj * m + gi] = s;
            }
        }
    }
}

extern "C" void kernel_covariance(int m, int n, float float_n, float *data, float *cov, float *mean)
{
    cov_mean<<<(m + 31) / 32, dim3(32, 8)>>>(m, n, float_n, data, mean);
    cov_center<<<dim3((m + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(m, n, data, mean);
    dim3 grid((m + BN - 1) / BN, (m + BM - 1) / BM);
    cov_regtile<<<grid, NT>>>(m, n, float_n, data, cov);
}
