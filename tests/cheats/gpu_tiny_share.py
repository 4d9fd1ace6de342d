"""Launches a trivial kernel of its own and leaves the real work to torch. Caught by: 'kernel-coverage' (< 30 %)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void touch_one(float* y) { if (threadIdx.x == 0 && blockIdx.x == 0) y[0] = y[0]; }
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "touch_one")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.where(x > 0, x, torch.zeros_like(x)) * 1.0 + 0.0
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((1,), (32,), (y.data_ptr(),))
        return y
