"""One thread per row: the direct port of the two row loops."""
import cupy as cp
import torch

BLOCK_SIZE = 128

CUDA_SOURCE = r"""
extern "C" __global__ void rmsnorm_naive(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y, int rows, int cols, float eps) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = x + (long long)r * cols;
    float* q = y + (long long)r * cols;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += p[c] * p[c];
    float inv = rsqrtf(s / cols + eps);
    for (int c = 0; c < cols; ++c) q[c] = p[c] * inv * w[c];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "rmsnorm_naive")


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.weight.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((rows + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (x.data_ptr(), w.data_ptr(), y.data_ptr(), cp.int32(rows), cp.int32(cols),
                     cp.float32(self.eps)))
        return y
