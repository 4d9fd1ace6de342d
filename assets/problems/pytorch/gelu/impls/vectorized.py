"""float4 accesses, UNROLL per thread: 16-byte transactions and more bytes in flight per thread."""
import cupy as cp
import torch

BLOCK_SIZE = 256
UNROLL = 2

CUDA_SOURCE = r"""
#ifndef UNROLL
#define UNROLL 2
#endif

__device__ __forceinline__ float gelu1(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }

// x and y must be 16-byte aligned. Block b covers float4s [b*blockDim*UNROLL, (b+1)*blockDim*UNROLL);
// the n % 4 tail elements are done by the first threads of block 0.
extern "C" __global__ void vec4_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    long long n4 = n / 4;
    long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        long long j = base + (long long)u * blockDim.x;
        if (j < n4) v[u] = x4[j];
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        long long j = base + (long long)u * blockDim.x;
        if (j < n4) {
            float4 w = v[u];
            w.x = gelu1(w.x); w.y = gelu1(w.y); w.z = gelu1(w.z); w.w = gelu1(w.w);
            y4[j] = w;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x < 4) {
        long long t = n4 * 4 + threadIdx.x;
        if (t < n) y[t] = gelu1(x[t]);
    }
}

extern "C" __global__ void scalar_kernel(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gelu1(x[i]);
}
"""

_module = cp.RawModule(code=CUDA_SOURCE, options=("-DUNROLL=%d" % UNROLL,))
_kernels = {}


def _get(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        if n == 0:
            return y
        args = (x.data_ptr(), y.data_ptr(), cp.int64(n))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            if x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0:
                per_block = BLOCK_SIZE * UNROLL
                blocks = max((n // 4 + per_block - 1) // per_block, 1)
                _get("vec4_kernel")((blocks,), (BLOCK_SIZE,), args)
            else:
                _get("scalar_kernel")(((n + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,), args)
        return y
