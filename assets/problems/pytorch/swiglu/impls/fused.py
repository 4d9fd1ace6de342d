"""Single pass: each thread reads its a and b and writes one output."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
extern "C" __global__ void swiglu_kernel(const float* __restrict__ x, float* __restrict__ out, long long rows, long long h) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * h) {
        long long r = i / h, c = i % h;
        const float* xr = x + r * 2 * h;
        float a = xr[c];
        out[i] = a / (1.0f + expf(-a)) * xr[h + c];
    }
}
"""

_swiglu = cp.RawKernel(CUDA_SOURCE, "swiglu_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        h = x.shape[-1] // 2
        rows = x.numel() // (2 * h)
        out = torch.empty(x.shape[:-1] + (h,), dtype=x.dtype, device=x.device)
        n = rows * h
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _swiglu(((n + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,), (x.data_ptr(), out.data_ptr(), cp.int64(rows), cp.int64(h)))
        return out
