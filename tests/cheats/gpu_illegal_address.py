"""Writes far outside its output on the GPU: a sticky CUDA fault. Verdict: runtime_error; the worker is replaced.

The offset comes from the launch (n), not a constant: a store through a literal null pointer is
undefined behaviour that the compiler deletes, which left the output unwritten (judged `incorrect`
on the H200) instead of faulting."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_bad(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i + (n << 24)] = x[i];  // ~2^24 elements per element of n past the end: unmapped
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_bad")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int64(n)))
        return y
