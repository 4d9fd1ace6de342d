"""A fixed grid sized to the machine; each thread strides over the tensor, amortising block launch."""
import cupy as cp
import torch

BLOCK_SIZE = 256
BLOCKS_PER_SM = 8

CUDA_SOURCE = r"""
extern "C" __global__ void relu_grid_stride(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        y[i] = v > 0.f ? v : 0.f;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_grid_stride")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        blocks = min((n + BLOCK_SIZE - 1) // BLOCK_SIZE, sms * BLOCKS_PER_SM)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((blocks,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int64(n)))
        return y
