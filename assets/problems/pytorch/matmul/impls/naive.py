"""One thread per output element: the triple loop with the two outer loops mapped to the grid."""
import cupy as cp
import torch

BLOCK_X = 16
BLOCK_Y = 16

CUDA_SOURCE = r"""
extern "C" __global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += gridDim.y * blockDim.y) {
        const float* a = A + (long long)row * K;
        float acc = 0.f;
        for (int k = 0; k < K; ++k) acc += a[k] * B[(long long)k * N + col];
        C[(long long)row * N + col] = acc;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_naive")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        if C.numel() == 0:
            return C
        grid = ((N + BLOCK_X - 1) // BLOCK_X, min((M + BLOCK_Y - 1) // BLOCK_Y, 65535))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (BLOCK_X, BLOCK_Y),
                    (A.data_ptr(), B.data_ptr(), C.data_ptr(), cp.int32(M), cp.int32(N), cp.int32(K)))
        return C
