"""Eager port: silu into a temporary, then multiply; the temporary costs two extra memory passes."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
extern "C" __global__ void silu_kernel(const float* __restrict__ x, float* __restrict__ t, long long rows, long long h) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * h) {
        long long r = i / h, c = i % h;
        float a = x[r * 2 * h + c];
        t[i] = a / (1.0f + expf(-a));
    }
}

extern "C" __global__ void gate_mul_kernel(const float* __restrict__ t, const float* __restrict__ x,
                                           float* __restrict__ out, long long rows, long long h) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * h) {
        long long r = i / h, c = i % h;
        out[i] = t[i] * x[r * 2 * h + h + c];
    }
}
"""

_module = cp.RawModule(code=CUDA_SOURCE)
_kernels = {}


def _k(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        h = x.shape[-1] // 2
        rows = x.numel() // (2 * h)
        t = torch.empty(x.shape[:-1] + (h,), dtype=x.dtype, device=x.device)
        out = torch.empty_like(t)
        n = rows * h
        grid = ((n + BLOCK_SIZE - 1) // BLOCK_SIZE,)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("silu_kernel")(grid, (BLOCK_SIZE,), (x.data_ptr(), t.data_ptr(), cp.int64(rows), cp.int64(h)))
            _k("gate_mul_kernel")(grid, (BLOCK_SIZE,), (t.data_ptr(), x.data_ptr(), out.data_ptr(), cp.int64(rows), cp.int64(h)))
        return out
