"""Warp-shuffle row reduction reading float4 when every row start is 16-byte aligned."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # multiple of 32

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// vec != 0 requires x 16-byte aligned and cols % 4 == 0.
extern "C" __global__ void rowsum_vec4(const float* __restrict__ x, float* __restrict__ y, int cols, int vec) {
    __shared__ float warp_part[32];
    const float* p = x + (long long)blockIdx.x * cols;
    float s = 0.f;
    if (vec) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        int n4 = cols >> 2;
        for (int c = threadIdx.x; c < n4; c += blockDim.x) {
            float4 v = p4[c];
            s += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
    }
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    s = warp_sum(s);
    if (lane == 0) warp_part[wid] = s;
    __syncthreads();
    if (wid == 0) {
        s = lane < (int)(blockDim.x >> 5) ? warp_part[lane] : 0.f;
        s = warp_sum(s);
        if (lane == 0) y[blockIdx.x] = s;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "rowsum_vec4")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        if rows == 0:
            return y
        vec = int(x.data_ptr() % 16 == 0 and cols % 4 == 0)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int32(cols), cp.int32(vec)))
        return y
