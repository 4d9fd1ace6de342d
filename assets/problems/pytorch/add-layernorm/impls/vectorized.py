"""Warp per row with 128-bit accesses on all five streams; scalar fallback keeps odd widths and offsets correct."""
import cupy as cp
import torch

ROWS_PER_BLOCK = 4

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// h % 4 == 0 and x, res, w, b, y all 16-byte aligned.
extern "C" __global__ void add_layernorm_vec4_kernel(const float* __restrict__ x, const float* __restrict__ res,
                                                     const float* __restrict__ w, const float* __restrict__ b,
                                                     float* __restrict__ y, long long rows, long long h, float eps) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= rows) return;
    int lane = threadIdx.x;
    long long h4 = h / 4;
    const float4* xr = reinterpret_cast<const float4*>(x + r * h);
    const float4* rr = reinterpret_cast<const float4*>(res + r * h);
    const float4* w4 = reinterpret_cast<const float4*>(w);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* yr = reinterpret_cast<float4*>(y + r * h);
    float sum = 0.0f;
    for (long long j = lane; j < h4; j += 32) {
        float4 u = xr[j], v = rr[j];
        sum += ((u.x + v.x) + (u.y + v.y)) + ((u.z + v.z) + (u.w + v.w));
    }
    float mean = warp_sum(sum) / (float)h;
    float sq = 0.0f;
    for (long long j = lane; j < h4; j += 32) {
        float4 u = xr[j], v = rr[j];
        float d0 = u.x + v.x - mean, d1 = u.y + v.y - mean, d2 = u.z + v.z - mean, d3 = u.w + v.w - mean;
        sq += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
    }
    float rstd = 1.0f / sqrtf(warp_sum(sq) / (float)h + eps);
    for (long long j = lane; j < h4; j += 32) {
        float4 u = xr[j], v = rr[j], g = w4[j], c = b4[j];
        float4 o;
        o.x = (u.x + v.x - mean) * rstd * g.x + c.x;
        o.y = (u.y + v.y - mean) * rstd * g.y + c.y;
        o.z = (u.z + v.z - mean) * rstd * g.z + c.z;
        o.w = (u.w + v.w - mean) * rstd * g.w + c.w;
        yr[j] = o;
    }
}

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
        y = torch.empty_like(x)
        w = self.norm.weight.contiguous()
        b = self.norm.bias.contiguous()
        ptrs = (x, residual, w, b, y)
        vec = h % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in ptrs)
        name = "add_layernorm_vec4_kernel" if vec else "add_layernorm_kernel"
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k(name)(((rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK,), (32, ROWS_PER_BLOCK),
                     tuple(t.data_ptr() for t in ptrs) + (cp.int64(rows), cp.int64(h), cp.float32(self.norm.eps)))
        return y
