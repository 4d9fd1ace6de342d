"""One thread per row: the textbook mean / variance / normalise loop."""
import cupy as cp
import torch

BLOCK_SIZE = 128

CUDA_SOURCE = r"""
extern "C" __global__ void layernorm_naive(const float* __restrict__ x, const float* __restrict__ w,
                                           const float* __restrict__ b, float* __restrict__ y,
                                           int rows, int cols, float eps) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = x + (long long)r * cols;
    float* q = y + (long long)r * cols;
    float s = 0.f;
    for (int c = 0; c < cols; ++c) s += p[c];
    float mean = s / cols;
    float v = 0.f;
    for (int c = 0; c < cols; ++c) { float d = p[c] - mean; v += d * d; }
    float rstd = rsqrtf(v / cols + eps);
    for (int c = 0; c < cols; ++c) q[c] = (p[c] - mean) * rstd * w[c] + b[c];
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "layernorm_naive")


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
            _kernel(((rows + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(),
                     cp.int32(rows), cp.int32(cols), cp.float32(self.ln.eps)))
        return y
