"""Direct port of the row loop: correct and simple, but a warp's 32 loads hit 32 different rows."""
import cupy as cp
import torch

BLOCK_SIZE = 128

CUDA_SOURCE = r"""
extern "C" __global__ void matvec_row_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                             long long M, long long K) {
    long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    const float* a = A + r * K;
    float total = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += 256) {  // chunked so rounding error does not grow with K
        float c = 0.0f;
        for (long long k = k0; k < K && k < k0 + 256; ++k) c += a[k] * x[k];
        total += c;
    }
    y[r] = total;
}
"""

_matvec = cp.RawKernel(CUDA_SOURCE, "matvec_row_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        y = torch.empty(M, 1, dtype=A.dtype, device=A.device)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _matvec(((M + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (A.data_ptr(), B.data_ptr(), y.data_ptr(), cp.int64(M), cp.int64(K)))
        return y
