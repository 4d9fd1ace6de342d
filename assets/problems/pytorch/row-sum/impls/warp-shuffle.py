"""One block per row; warps reduce in registers with shuffles, one shared slot per warp."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # multiple of 32

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void rowsum_shfl(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float warp_part[32];
    const float* p = x + (long long)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
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

_kernel = cp.RawKernel(CUDA_SOURCE, "rowsum_shfl")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        if rows == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int32(cols)))
        return y
