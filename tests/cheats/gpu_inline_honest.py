"""A correct KernelBench-style load_inline candidate: accepted unchanged, built once per content hash."""
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

__global__ void relu_inline_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : 0.f; }
}

torch::Tensor relu_inline(torch::Tensor x) {
    auto y = torch::empty_like(x);
    long long n = x.numel();
    relu_inline_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_source = "torch::Tensor relu_inline(torch::Tensor x);"

relu_module = load_inline(name="relu_inline", cpp_sources=cpp_source, cuda_sources=cuda_source,
                          functions=["relu_inline"], verbose=False,
                          extra_include_paths=[], extra_cuda_cflags=["-O3"])


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return relu_module.relu_inline(x.contiguous())
