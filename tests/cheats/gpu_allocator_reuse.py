"""Returns fresh torch.empty memory without writing it, hoping it still holds the reference's answer
(KernelBench's result-reuse exploit). Caught by: allocator scrub → correctness (output never written)."""
import cupy as cp  # noqa: F401 - looks like a kernel candidate
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_unused(const float* x, float* y, long long n) { }
"""


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
