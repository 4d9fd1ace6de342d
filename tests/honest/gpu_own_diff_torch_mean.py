"""The squared differences by a kernel of its own, the mean by torch.mean: honest (a level-1 loss written the
usual way)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void squared_diff(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ d, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float x = a[i] - b[i]; d[i] = x * x; }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "squared_diff")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        d = torch.empty_like(a)
        n = a.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (a.data_ptr(), b.data_ptr(), d.data_ptr(), cp.int64(n)))
        return torch.mean(d)
