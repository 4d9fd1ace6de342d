"""Warp-shuffle RMSNorm with 16-byte loads and stores when rows and weight are aligned."""
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

// vec != 0 requires x, w, y 16-byte aligned and cols % 4 == 0.
extern "C" __global__ void rmsnorm_vec4(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, int cols, float eps, int vec) {
    __shared__ float red[33];
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    const float4* p4 = reinterpret_cast<const float4*>(p);
    int t = threadIdx.x, n4 = cols >> 2;
    float s = 0.f;
    if (vec) {
        for (int c = t; c < n4; c += blockDim.x) {
            float4 a = p4[c];
            s += (a.x * a.x + a.y * a.y) + (a.z * a.z + a.w * a.w);
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) s += p[c] * p[c];
    }
    float inv = rsqrtf(block_sum(s, red) / cols + eps);
    if (vec) {
        const float4* w4 = reinterpret_cast<const float4*>(w);
        for (int c = t; c < n4; c += blockDim.x) {
            float4 a = p4[c], g = w4[c];
            a.x = a.x * inv * g.x; a.y = a.y * inv * g.y; a.z = a.z * inv * g.z; a.w = a.w * inv * g.w;
            reinterpret_cast<float4*>(q)[c] = a;
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) q[c] = p[c] * inv * w[c];
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "rmsnorm_vec4")


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
        vec = int(cols % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in (x, w, y)))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), w.data_ptr(), y.data_ptr(), cp.int32(cols),
                                             cp.float32(self.eps), cp.int32(vec)))
        return y
