"""Shared-memory transpose moving 16 bytes per global access on interior tiles."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
// 256 threads per 32x32 tile: thread t handles row t/8, columns 4*(t%8) .. +3.
// vec != 0 requires x, y 16-byte aligned and M % 4 == 0, N % 4 == 0; edge tiles always go scalar.
extern "C" __global__ void __launch_bounds__(256) transpose_vec4(const float* __restrict__ x, float* __restrict__ y,
                                                                 int M, int N, int vec) {
    __shared__ float tile[32][33];
    int t = threadIdx.x, row = t >> 3, c4 = (t & 7) * 4;
    int j0 = blockIdx.x * 32;
    int tiles_m = (M + 31) / 32;
    for (int tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
        int i0 = tm * 32;
        bool full = vec && i0 + 32 <= M && j0 + 32 <= N;
        if (full) {
            float4 v = *reinterpret_cast<const float4*>(x + (long long)(i0 + row) * N + j0 + c4);
            tile[row][c4] = v.x; tile[row][c4 + 1] = v.y; tile[row][c4 + 2] = v.z; tile[row][c4 + 3] = v.w;
        } else {
            int i = i0 + row;
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                int j = j0 + c4 + q;
                if (i < M && j < N) tile[row][c4 + q] = x[(long long)i * N + j];
            }
        }
        __syncthreads();
        // output row j0 + row, output columns i0 + c4 .. +3
        if (full) {
            float4 v = make_float4(tile[c4][row], tile[c4 + 1][row], tile[c4 + 2][row], tile[c4 + 3][row]);
            *reinterpret_cast<float4*>(y + (long long)(j0 + row) * M + i0 + c4) = v;
        } else {
            int j = j0 + row;
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                int i = i0 + c4 + q;
                if (j < N && i < M) y[(long long)j * M + i] = tile[c4 + q][row];
            }
        }
        __syncthreads();
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "transpose_vec4")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(N, M, dtype=x.dtype, device=x.device)
        if x.numel() == 0:
            return y
        vec = int(M % 4 == 0 and N % 4 == 0 and x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0)
        grid = ((N + 31) // 32, min((M + 31) // 32, 65535))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (256,), (x.data_ptr(), y.data_ptr(), cp.int32(M), cp.int32(N), cp.int32(vec)))
        return y
