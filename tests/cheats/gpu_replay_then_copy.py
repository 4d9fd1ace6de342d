"""Replays the reference (its matmul and its mean) and passes the answer through a copy kernel of its own, so
the answer depends on that kernel. Caught by: runtime 'torch-op' (every op of the reference called, the
reference's GPU work done by kernels not its own)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "copy")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        y = torch.matmul(a, b).mean(dim=1).contiguous()
        z = torch.empty_like(y)
        n = y.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (y.data_ptr(), z.data_ptr(), cp.int64(n)))
        return z
