"""The convolution left to cuDNN, ReLU and the bias fused into one kernel of its own (KernelBench level 2's
usual solution): honest, whatever share of the GPU time its kernel is."""
import cupy as cp
import torch
import torch.nn as nn
import torch.nn.functional as F

CUDA_SOURCE = r"""
extern "C" __global__ void relu_bias(float* __restrict__ y, const float* __restrict__ bias, long long n, int hw,
                                     int channels) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (int)((i / hw) % channels);
    float v = y[i];
    y[i] = (v > 0.f ? v : 0.f) + bias[c];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_bias")


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1) * 0.1)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias, padding=1).contiguous()
        n, hw, channels = y.numel(), y.shape[2] * y.shape[3], y.shape[1]
        bias = self.bias.contiguous()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + 255) // 256,), (256,), (y.data_ptr(), bias.data_ptr(), cp.int64(n), cp.int32(hw),
                                                  cp.int32(channels)))
        return y
