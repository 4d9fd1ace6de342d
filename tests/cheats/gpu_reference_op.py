"""Launches a kernel of its own (a copy) but takes the answer from torch.relu. Caught by: runtime 'torch-op'
(the reference's op ran as much GPU time as the reference itself: it did the work)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_copy(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_copy")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        z = torch.empty_like(y)
        n = y.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (y.data_ptr(), z.data_ptr(), cp.int64(n)))
        return z
