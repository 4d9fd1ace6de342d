"""A warp per row: coalesced, barrier-free reductions, and the sum x + residual is never written to memory."""
import cupy as cp
import torch

ROWS_PER_BLOCK = 4

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// blockDim = (32, rows per block); one warp owns one row and every lane ends with the same mean/rstd.
extern "C" __global__ void add_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ res,
                                                const float* __restrict__ w, const float* __restrict__ b,
                                                float* __restrict__ y, long long rows, long long h, float eps) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= rows) return;
    int lane = threadIdx.x;
    const float* xr = x + r * h;
    const float* rr = res + r * h;
    float* yr = y + r * h;
    float sum = 0.0f;
    for (long long j = lane; j < h; j += 32) sum += xr[j] + rr[j];
    float mean = warp_sum(sum) / (float)h;
    float sq = 0.0f;
    for (long long j = lane; j < h; j += 32) {
        float d = xr[j] + rr[j] - mean;
        sq += d * d;
    }
    float rstd = 1.0f / sqrtf(warp_sum(sq) / (float)h + eps);
    for (long long j = lane; j < h; j += 32) yr[j] = (xr[j] + rr[j] - mean) * rstd * w[j] + b[j];
}
"""

_add_ln = cp.RawKernel(CUDA_SOURCE, "add_layernorm_kernel")


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
        y = torch.empty_like(x)
        w = self.norm.weight.contiguous()
        b = self.norm.bias.contiguous()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _add_ln(((rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK,), (32, ROWS_PER_BLOCK),
                    (x.data_ptr(), residual.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int64(rows), cp.int64(h),
                     cp.float32(self.norm.eps)))
        return y
