"""One block per row: coalesced passes, sums combined in a shared-memory tree."""
import cupy as cp
import torch

BLOCK_SIZE = 256  # power of two (tree reduction)

CUDA_SOURCE = r"""
// Sum over the block (blockDim a power of two), returned to every thread.
__device__ float block_sum_tree(float v, float* sdata) {
    int t = threadIdx.x;
    __syncthreads();
    sdata[t] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) sdata[t] += sdata[t + k];
        __syncthreads();
    }
    return sdata[0];
}

extern "C" __global__ void layernorm_smem(const float* __restrict__ x, const float* __restrict__ w,
                                          const float* __restrict__ b, float* __restrict__ y,
                                          int cols, float eps) {
    __shared__ float sdata[1024];
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    int t = threadIdx.x;
    float s = 0.f;
    for (int c = t; c < cols; c += blockDim.x) s += p[c];
    float mean = block_sum_tree(s, sdata) / cols;
    float v = 0.f;
    for (int c = t; c < cols; c += blockDim.x) { float d = p[c] - mean; v += d * d; }
    float rstd = rsqrtf(block_sum_tree(v, sdata) / cols + eps);
    for (int c = t; c < cols; c += blockDim.x) q[c] = (p[c] - mean) * rstd * w[c] + b[c];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "layernorm_smem")


class ModelNew(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.ln = torch.nn.LayerNorm(dim)  # owns weight/bias; its forward is never called
        with torch.no_grad():
            self.ln.weight.normal_(1.0, 0.1)
            self.ln.bias.normal_(0.0, 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.ln.weight.contiguous()
        b = self.ln.bias.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        if x.numel() == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel((rows,), (BLOCK_SIZE,), (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(),
                                             cp.int32(cols), cp.float32(self.ln.eps)))
        return y
