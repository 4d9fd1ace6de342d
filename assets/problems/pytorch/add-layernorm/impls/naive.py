"""Eager port: materialise x + residual, then one thread walks each row three times."""
import cupy as cp
import torch

BLOCK_SIZE = 128
ADD_BLOCK = 256

CUDA_SOURCE = r"""
extern "C" __global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ s, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) s[i] = a[i] + b[i];
}

extern "C" __global__ void layernorm_row_kernel(const float* __restrict__ s, const float* __restrict__ w, const float* __restrict__ b,
                                                float* __restrict__ y, long long rows, long long h, float eps) {
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* sr = s + r * h;
    float* yr = y + r * h;
    // serial sums in chunks of 256 so rounding error grows with 256 + h / 256, not with h
    float sum = 0.0f;
    for (long long j0 = 0; j0 < h; j0 += 256) {
        float c = 0.0f;
        for (long long j = j0; j < h && j < j0 + 256; ++j) c += sr[j];
        sum += c;
    }
    float mean = sum / (float)h;
    float sq = 0.0f;
    for (long long j0 = 0; j0 < h; j0 += 256) {
        float c = 0.0f;
        for (long long j = j0; j < h && j < j0 + 256; ++j) {
            float d = sr[j] - mean;
            c += d * d;
        }
        sq += c;
    }
    float rstd = 1.0f / sqrtf(sq / (float)h + eps);
    for (long long j = 0; j < h; ++j) yr[j] = (sr[j] - mean) * rstd * w[j] + b[j];
}
"""

_module = cp.RawModule(code=CUDA_SOURCE)
_kernels = {}


def _k(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        residual = residual.contiguous()
        h = x.shape[-1]
        rows = x.numel() // h
        n = rows * h
        s = torch.empty_like(x)
        y = torch.empty_like(x)
        w = self.norm.weight.contiguous()
        b = self.norm.bias.contiguous()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("add_kernel")(((n + ADD_BLOCK - 1) // ADD_BLOCK,), (ADD_BLOCK,), (x.data_ptr(), residual.data_ptr(), s.data_ptr(), cp.int64(n)))
            _k("layernorm_row_kernel")(((rows + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                                       (s.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int64(rows), cp.int64(h),
                                        cp.float32(self.norm.eps)))
        return y
