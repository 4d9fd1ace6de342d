"""Two shared-memory-tiled GEMMs; the elementwise tail of each layer is applied as the tile is stored."""
import cupy as cp
import torch

TILE = 32

CUDA_SOURCE = r"""
#ifndef TILE
#define TILE 32
#endif

// y = x w^T + bias, then relu (mode 0) or + res (mode 1). blockDim = (TILE, TILE).
extern "C" __global__ void linear_tiled_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                               const float* __restrict__ bias, const float* __restrict__ res,
                                               float* __restrict__ y, int M, int N, int K, int mode) {
    __shared__ float xs[TILE][TILE + 1];
    __shared__ float ws[TILE][TILE + 1];
    int tiles_n = (N + TILE - 1) / TILE;
    int m0 = (blockIdx.x / tiles_n) * TILE;
    int n0 = (blockIdx.x % tiles_n) * TILE;
    int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int k = k0 + tx;
        xs[ty][tx] = (m0 + ty < M && k < K) ? x[(long long)(m0 + ty) * K + k] : 0.0f;
        ws[ty][tx] = (n0 + ty < N && k < K) ? w[(long long)(n0 + ty) * K + k] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    int m = m0 + ty, n = n0 + tx;
    if (m < M && n < N) {
        long long o = (long long)m * N + n;
        float v = acc + bias[n];
        y[o] = mode == 0 ? fmaxf(v, 0.0f) : v + res[o];
    }
}
"""

_linear = cp.RawKernel(CUDA_SOURCE, "linear_tiled_kernel", options=("-DTILE=%d" % TILE,))


def _launch(x, w, b, res, y, mode):
    M, K = x.shape
    N = w.shape[0]
    blocks = ((M + TILE - 1) // TILE) * ((N + TILE - 1) // TILE)
    _linear((blocks,), (TILE, TILE), (x.data_ptr(), w.data_ptr(), b.data_ptr(), res.data_ptr(), y.data_ptr(),
                                      cp.int32(M), cp.int32(N), cp.int32(K), cp.int32(mode)))


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(dim, hidden)
        self.fc2 = torch.nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w1, b1 = self.fc1.weight.contiguous(), self.fc1.bias.contiguous()
        w2, b2 = self.fc2.weight.contiguous(), self.fc2.bias.contiguous()
        M, D = x.shape
        h = torch.empty(M, w1.shape[0], dtype=x.dtype, device=x.device)
        y = torch.empty(M, D, dtype=x.dtype, device=x.device)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _launch(x, w1, b1, x, h, 0)
            _launch(h, w2, b2, x, y, 1)
        return y
