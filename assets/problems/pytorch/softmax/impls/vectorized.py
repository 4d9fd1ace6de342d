"""Online warp-shuffle softmax moving 16 bytes per load/store when rows allow it."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # multiple of 32

CUDA_SOURCE = r"""
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
    float mn = fmaxf(m, m2);
    if (mn == -__int_as_float(0x7f800000)) return;
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

__device__ __forceinline__ void push(float& m, float& s, float v) {
    if (v > m) { s = s * expf(m - v) + 1.f; m = v; }
    else s += expf(v - m);
}

// vec != 0 requires x, y 16-byte aligned and cols % 4 == 0.
extern "C" __global__ void softmax_vec4(const float* __restrict__ x, float* __restrict__ y, int cols, int vec) {
    __shared__ float part_m[32], part_s[32], total[2];
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    int n4 = cols >> 2;

    float m = -__int_as_float(0x7f800000), s = 0.f;
    if (vec) {
        for (int c = t; c < n4; c += blockDim.x) {
            float4 v = reinterpret_cast<const float4*>(p)[c];
            push(m, s, v.x); push(m, s, v.y); push(m, s, v.z); push(m, s, v.w);
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) push(m, s, p[c]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        merge(m, s, m2, s2);
    }
    if (lane == 0) { part_m[wid] = m; part_s[wid] = s; }
    __syncthreads();
    if (wid == 0) {
        int nw = blockDim.x >> 5;
        m = lane < nw ? part_m[lane] : -__int_as_float(0x7f800000);
        s = lane < nw ? part_s[lane] : 0.f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, o);
            float s2 = __shfl_xor_sync(0xffffffffu, s, o);
            merge(m, s, m2, s2);
        }
        if (lane == 0) { total[0] = m; total[1] = 1.f / s; }
    }
    __syncthreads();
    m = total[0];
    float inv = total[1];
    if (vec) {
        for (int c = t; c < n4; c += blockDim.x) {
            float4 v = reinterpret_cast<const float4*>(p)[c];
            v.x = expf(v.x - m) * inv; v.y = expf(v.y - m) * inv;
            v.z = expf(v.z - m) * inv; v.w = expf(v.w - m) * inv;
            reinterpret_cast<float4*>(q)[c] = v;
        }
    } else {
        for (int c = t; c < cols; c += blockDim.x) q[c] = expf(p[c] - m) * inv;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "softmax_vec4")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        vec = int(x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0 and cols % 4 == 0)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int32(cols), cp.int32(vec)))
        return y
