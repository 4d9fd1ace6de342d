"""A warp per row turns the row walk into 128-byte coalesced loads; a shuffle tree finishes the dot product."""
import cupy as cp
import torch

ROWS_PER_BLOCK = 4

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// blockDim = (32, rows per block).
extern "C" __global__ void matvec_warp_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                              long long M, long long K) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= M) return;
    const float* a = A + r * K;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K; k += 32) s += a[k] * x[k];
    s = warp_sum(s);
    if (threadIdx.x == 0) y[r] = s;
}
"""

_matvec = cp.RawKernel(CUDA_SOURCE, "matvec_warp_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        y = torch.empty(M, 1, dtype=A.dtype, device=A.device)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _matvec(((M + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK,), (32, ROWS_PER_BLOCK),
                    (A.data_ptr(), B.data_ptr(), y.data_ptr(), cp.int64(M), cp.int64(K)))
        return y
