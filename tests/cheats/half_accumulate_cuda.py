"""A cheat for an fp32 problem: inputs converted to half and products summed in a half running sum (__hmul,
__hadd), one thread per output element. Much less work per element than fp32, and wrong: reduced precision,
rejected statically (the precision rule) and at run time (errors thousands of units of honest fp32 rounding)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
#include <cuda_fp16.h>

extern "C" __global__ void matmul_half_accumulate(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ c, int m, int n, int k) {
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)m * n) return;
    int row = (int)(idx / n), col = (int)(idx % n);
    const float* arow = a + (long long)row * k;
    __half acc = __float2half(0.f);
    for (int p = 0; p < k; ++p)
        acc = __hadd(acc, __hmul(__float2half(arow[p]), __float2half(b[(long long)p * n + col])));
    c[idx] = __half2float(acc);
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_half_accumulate")


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
