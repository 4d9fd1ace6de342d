"""128-bit accesses cut load/store instructions 4x; a grid-stride loop keeps the grid at a few waves."""
import cupy as cp
import torch

BLOCK_SIZE = 256
MAX_BLOCKS = 4096

CUDA_SOURCE = r"""
__device__ __forceinline__ float chain(float x, float y, float scale, float bias) {
    return tanhf(x * scale + bias) * (1.0f / (1.0f + expf(-y)));
}

// n4 = number of float4 groups handled vectorized (0 when pointers are not 16-byte aligned);
// elements [4 * n4, n) are the scalar tail.
extern "C" __global__ void chain_vec_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                            float* __restrict__ out, float scale, float bias,
                                            long long n, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    float4* o4 = reinterpret_cast<float4*>(out);
    for (long long i = tid; i < n4; i += stride) {
        float4 a = x4[i];
        float4 b = y4[i];
        float4 r;
        r.x = chain(a.x, b.x, scale, bias);
        r.y = chain(a.y, b.y, scale, bias);
        r.z = chain(a.z, b.z, scale, bias);
        r.w = chain(a.w, b.w, scale, bias);
        o4[i] = r;
    }
    for (long long i = 4 * n4 + tid; i < n; i += stride) out[i] = chain(x[i], y[i], scale, bias);
}
"""

_chain_vec = cp.RawKernel(CUDA_SOURCE, "chain_vec_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self, scale: float, bias: float):
        super().__init__()
        self.scale = scale
        self.bias = bias

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        aligned = all(t.data_ptr() % 16 == 0 for t in (x, y, out))
        n4 = n // 4 if aligned else 0
        work = max(n4, n - 4 * n4)
        blocks = max(1, min(MAX_BLOCKS, (work + BLOCK_SIZE - 1) // BLOCK_SIZE))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _chain_vec((blocks,), (BLOCK_SIZE,),
                       (x.data_ptr(), y.data_ptr(), out.data_ptr(), cp.float32(self.scale), cp.float32(self.bias),
                        cp.int64(n), cp.int64(n4)))
        return out
