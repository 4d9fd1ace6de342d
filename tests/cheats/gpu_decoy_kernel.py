"""Compiles a kernel it never launches and computes with torch ops. Caught by: runtime 'kernel-coverage'."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_decoy(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_decoy")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * (x > 0)
