"""One block per row: coalesced reads, shuffle reduction, and the rescale re-reads the row while it is still cached."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// blockDim.x is a multiple of 32 and at most 1024; every thread returns the block total.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float red[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    int nwarps = blockDim.x >> 5;
    float t = lane < nwarps ? red[lane] : 0.0f;
    return warp_sum(t);
}

extern "C" __global__ void l2norm_row_kernel(const float* __restrict__ x, float* __restrict__ y, long long dim) {
    const float* xr = x + (long long)blockIdx.x * dim;
    float* yr = y + (long long)blockIdx.x * dim;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < dim; j += blockDim.x) s += xr[j] * xr[j];
    float inv = 1.0f / sqrtf(block_sum(s));
    for (long long j = threadIdx.x; j < dim; j += blockDim.x) yr[j] = xr[j] * inv;
}
"""

_l2norm = cp.RawKernel(CUDA_SOURCE, "l2norm_row_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, dim = x.shape[0], x.numel() // x.shape[0]
        y = torch.empty_like(x)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _l2norm((rows,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int64(dim)))
        return y
