"""One block per row; the sum of squares is reduced with warp shuffles."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # multiple of 32

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the block (blockDim a multiple of 32), returned to every thread. red: 33 shared floats.
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

extern "C" __global__ void rmsnorm_shfl(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, int cols, float eps) {
    __shared__ float red[33];
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c] * p[c];
    float inv = rsqrtf(block_sum(s, red) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] * inv * w[c];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "rmsnorm_shfl")


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
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), w.data_ptr(), y.data_ptr(), cp.int32(cols),
                                             cp.float32(self.eps)))
        return y
