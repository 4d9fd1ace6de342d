"""Splits the ReLU over the current stream and a second one, joined back before returning: honest."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_half(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : 0.f; }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_half")
_side = torch.cuda.Stream()


def _launch(stream, x, y, n):
    with cp.cuda.ExternalStream(stream.cuda_stream):
        if n > 0:
            _kernel(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int64(n)))


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        half = n // 2
        main = torch.cuda.current_stream()
        _side.wait_stream(main)  # the side stream starts after the inputs are ready
        flat_x, flat_y = x.view(-1), y.view(-1)
        _launch(main, flat_x[:half], flat_y[:half], half)
        _launch(_side, flat_x[half:], flat_y[half:], n - half)
        main.wait_stream(_side)  # and the caller's stream waits for it: all work is inside the call
        return y
