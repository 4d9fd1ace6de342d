"""One thread per output element: the direct port of out[j][i] = x[i][j]."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
extern "C" __global__ void transpose_naive(const float* __restrict__ x, float* __restrict__ y,
                                           long long M, long long N) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= M * N) return;
    long long j = o / M, i = o - j * M;  // y[j][i] = x[i][j]
    y[o] = x[i * N + j];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "transpose_naive")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, M, dtype=x.dtype, device=x.device)
        n = M * N
        if n == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((n + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (x.data_ptr(), y.data_ptr(), cp.int64(M), cp.int64(N)))
        return y
