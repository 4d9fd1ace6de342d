"""Classic shared-memory tiling: each A/B element is fetched from DRAM/L2 once per tile, not once per output."""
import cupy as cp
import torch

TILE = 16

CUDA_SOURCE = r"""
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * TILE + tx;
    int tiles_m = (M + TILE - 1) / TILE;
    for (int tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
        int row = tm * TILE + ty;
        float acc = 0.f;
        for (int k0 = 0; k0 < K; k0 += TILE) {
            As[ty][tx] = (row < M && k0 + tx < K) ? A[(long long)row * K + k0 + tx] : 0.f;
            Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(long long)(k0 + ty) * N + col] : 0.f;
            __syncthreads();
#pragma unroll
            for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }
        if (row < M && col < N) C[(long long)row * N + col] = acc;
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_tiled", options=("-DTILE=%d" % TILE,))


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
        grid = ((N + TILE - 1) // TILE, min((M + TILE - 1) // TILE, 65535))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (TILE, TILE),
                    (A.data_ptr(), B.data_ptr(), C.data_ptr(), cp.int32(M), cp.int32(N), cp.int32(K)))
        return C
