// Direct port: one thread per mean, per data element and per upper-triangle cov entry. Each cov
// thread reads two full columns of data (2n loads) with no reuse between threads.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void cov_mean(int m, int n, float float_n, const float *data, float *mean)
{
    int j = blockIdx.x * (BLOCK_X * BLOCK_Y) + threadIdx.x;
    if (j >= m) return;
    float s = 0.f;
    for (int i = 0; i < n; i++)
        s += data[(long long)i * m + j];
    mean[j] = s / float_n;
}

__global__ void cov_center(int m, int n, float *data, const float *mean)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i < n && j < m)
        data[(long long)i * m + j] -= mean[j];
}

__global__ void cov_naive(int m, int n, float float_n, const float *data, float *cov)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    int i = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (i >= m || j >= m || j < i) return;
    float s = 0.f;
    for (int k = 0; k < n; k++)
        s += data[(long long)k * m + i] * data[(long long)k * m + j];
    s /= (float_n - 1.0f);
    cov[(long long)i * m + j] = s;
    cov[(long long)j * m + i] = s;
}

extern "C" void kernel_covariance(int m, int n, float float_n, float *data, float *cov, float *mean)
{
    dim3 block(BLOCK_X, BLOCK_Y);
    cov_mean<<<(m + BLOCK_X * BLOCK_Y - 1) / (BLOCK_X * BLOCK_Y), BLOCK_X * BLOCK_Y>>>(m, n, float_n, data, mean);
    cov_center<<<dim3((m + BLOCK_X - 1) / BLOCK_X, (n + BLOCK_Y - 1) / BLOCK_Y), block>>>(m, n, data, mean);
    cov_naive<<<dim3((m + BLOCK_X - 1) / BLOCK_X, (m + BLOCK_Y - 1) / BLOCK_Y), block>>>(m, n, float_n, data, cov);
}
