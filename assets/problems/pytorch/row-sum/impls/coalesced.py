"""One block per row: threads read consecutive addresses, partial sums meet in a shared-memory tree."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # power of two (tree reduction)

CUDA_SOURCE = r"""
extern "C" __global__ void rowsum_smem(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float sdata[1024];
    const float* p = x + (long long)blockIdx.x * cols;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
    sdata[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) sdata[threadIdx.x] += sdata[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = sdata[0];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "rowsum_smem")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        if rows == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), y.data_ptr(), cp.int32(cols)))
        return y
