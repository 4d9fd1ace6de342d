"""One thread per row: the sequential running-sum loop."""
import cupy as cp
import torch

BLOCK_SIZE = 128

CUDA_SOURCE = r"""
extern "C" __global__ void scan_naive(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = x + (long long)r * cols;
    float* q = y + (long long)r * cols;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) {
        s += p[c];
        q[c] = s;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "scan_naive")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((rows + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (x.data_ptr(), y.data_ptr(), cp.int32(rows), cp.int32(cols)))
        return y
