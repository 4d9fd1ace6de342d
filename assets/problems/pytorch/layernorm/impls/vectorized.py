"""Warp-shuffle LayerNorm with 16-byte loads and stores when every row and parameter is aligned."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # multiple of 32

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ float block_sum(float v, float* red) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = lane < (int)(blockDim.x >> 5) ? red[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0) red[32] = v;
    }
    __syncthreads();
    return red[32];
}

// vec != 0 requires x, w, b, y 16-byte aligned and cols % 4 == 0.
extern "C" __global__ void layernorm_vec4(const float* __restrict__ x, const float* __restrict__ w,
                                          const float* __restrict__ b, float* __restrict__ y,
                                          int cols, float eps, int vec) {
    __shared__ float red[33];
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    const float4* p4 = reinterpret_cast<const float4*>(p);
    int t = threadIdx.x, n4 = cols >> 2;

    float s = 0.f;
    if (vec) {
        for (int c = t; c < n4; c += blockDim.x) { float4 a = p4[c]; s += (a.x + a.y) + (a.z + a.w); }
    } else {
        for (int c = t; c < cols; c += blockDim.x) s += p[c];
    }
    float mean = block_sum(s, red) / cols;

    float v = 0.f;
    if (vec) {
        for (int c = t; c < n4; c += blockDim.x) {
            float4 a = p4[c];
            float d0 = a.x - mean, d1 = a.y - mean, d2 = a.z - mean, d3 = a.w - mean;
            v += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) { float d = p[c] - mean; v += d * d; }
    }
    float rstd = rsqrtf(block_sum(v, red) / cols + eps);

    if (vec) {
        const float4* w4 = reinterpret_cast<const float4*>(w);
        const float4* b4 = reinterpret_cast<const float4*>(b);
        for (int c = t; c < n4; c += blockDim.x) {
            float4 a = p4[c], g = w4[c], h = b4[c], o;
            o.x = (a.x - mean) * rstd * g.x + h.x;
            o.y = (a.y - mean) * rstd * g.y + h.y;
            o.z = (a.z - mean) * rstd * g.z + h.z;
            o.w = (a.w - mean) * rstd * g.w + h.w;
            reinterpret_cast<float4*>(q)[c] = o;
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) q[c] = (p[c] - mean) * rstd * w[c] + b[c];
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "layernorm_vec4")


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)  # owns weight/bias; its forward is never called
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.ln.weight.contiguous()
        b = self.ln.bias.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        vec = int(cols % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in (x, w, b, y)))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(),
                                             cp.int32(cols), cp.float32(self.ln.eps), cp.int32(vec)))
        return y
