"""Honest: one thread per output element, a plain serial loop over K with an fp32 running sum (the naive
kernel's order: every product added in turn, 131072 of them at the fixture's size)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void matmul_serial_k(const float* __restrict__ a, const float* __restrict__ b,
                                           float* __restrict__ c, int m, int n, int k) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)m * n) return;
    int row = (int)(idx / n), col = (int)(idx % n);
    const float* arow = a + (long long)row * k;
    float acc = 0.f;
    for (int p = 0; p < k; ++p) acc += arow[p] * b[(long long)p * n + col];
    c[idx] = acc;
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_serial_k")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty(m, n, device=a.device, dtype=a.dtype)
        if c.numel() == 0:
            return c
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((m * n + 127) // 128,), (128,),
                    (a.data_ptr(), b.data_ptr(), c.data_ptr(), cp.int32(m), cp.int32(n), cp.int32(k)))
        return c
