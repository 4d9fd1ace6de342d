"""Honest: the classic shared-memory tiled matmul. 16x16 tiles of A and B staged through shared memory, each
thread an fp32 running sum over the tiles in order; loads outside the matrices read as zero, so any M, N, K."""
import cupy as cp
import torch

TILE = 16

CUDA_SOURCE = r"""
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int m, int n, int k) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < k; t += TILE) {
        int ak = t + threadIdx.x, bk = t + threadIdx.y;
        as[threadIdx.y][threadIdx.x] = (row < m && ak < k) ? a[(long long)row * k + ak] : 0.f;
        bs[threadIdx.y][threadIdx.x] = (bk < k && col < n) ? b[(long long)bk * n + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int p = 0; p < TILE; ++p) acc += as[threadIdx.y][p] * bs[p][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) c[(long long)row * n + col] = acc;
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_tiled")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, device=a.device, dtype=a.dtype)
        if c.numel() == 0:
            return c
        grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (TILE, TILE), (a.data_ptr(), b.data_ptr(), c.data_ptr(), cp.int32(m), cp.int32(n),
                                         cp.int32(k)))
        return c
