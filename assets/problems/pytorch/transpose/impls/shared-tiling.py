"""Transpose through a padded shared-memory tile so both the global read and the global write coalesce."""
import cupy as cp
import torch

BLOCK_ROWS = 8  # threads per block: 32 x BLOCK_ROWS; each thread moves 32 / BLOCK_ROWS elements

CUDA_SOURCE = r"""
#define TILE 32

extern "C" __global__ void transpose_tiled(const float* __restrict__ x, float* __restrict__ y, int M, int N) {
    __shared__ float tile[TILE][TILE + 1];  // +1 column: column reads hit 32 different banks
    int tx = threadIdx.x;
    int j0 = blockIdx.x * TILE;
    int tiles_m = (M + TILE - 1) / TILE;
    for (int tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
        int i0 = tm * TILE;
        for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
            int i = i0 + r, j = j0 + tx;
            if (i < M && j < N) tile[r][tx] = x[(long long)i * N + j];
        }
        __syncthreads();
        for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
            int j = j0 + r, i = i0 + tx;  // y[j][i] = x[i][j]
            if (j < N && i < M) y[(long long)j * M + i] = tile[tx][r];
        }
        __syncthreads();
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "transpose_tiled")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, M, dtype=x.dtype, device=x.device)
        if x.numel() == 0:
            return y
        grid = ((N + 31) // 32, min((M + 31) // 32, 65535))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (32, BLOCK_ROWS), (x.data_ptr(), y.data_ptr(), cp.int32(M), cp.int32(N)))
        return y
