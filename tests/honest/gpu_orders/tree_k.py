"""Honest: one block per output element. Its 256 threads stride over K, each with an fp32 running sum, and the
256 partials are then added pairwise in a shared-memory tree (a reduction kernel's order)."""
import cupy as cp
import torch

THREADS = 256

CUDA_SOURCE = r"""
extern "C" __global__ void matmul_tree_k(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ c, int m, int n, int k) {
    __shared__ float part[256];
    int idx = blockIdx.x;
    int row = idx / n, col = idx % n;
    const float* arow = a + (long long)row * k;
    float acc = 0.f;
    for (int p = threadIdx.x; p < k; p += blockDim.x) acc += arow[p] * b[(long long)p * n + col];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) c[idx] = part[0];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_tree_k")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, device=a.device, dtype=a.dtype)
        if c.numel() == 0:
            return c
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((m * n,), (THREADS,), (a.data_ptr(), b.data_ptr(), c.data_ptr(), cp.int32(m), cp.int32(n),
                                           cp.int32(k)))
        return c
