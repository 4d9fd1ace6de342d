"""A correct CuPy candidate: must be verdict correct with no integrity finding on a GPU."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_honest(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : 0.f; }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_honest")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int64(n)))
        return y
