"""float4 loads: same bytes, a quarter of the load instructions, more bytes in flight per thread."""
import cupy as cp
import torch

BLOCK_SIZE = 256
MAX_BLOCKS = 1056
FINAL_THREADS = 1024

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// blockDim.x is a multiple of 32 and at most 1024; every thread returns the block total.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float red[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();
    int nwarps = blockDim.x >> 5;
    float t = lane < nwarps ? red[lane] : 0.0f;
    return warp_sum(t);
}

// n4 float4 groups are read vectorized (0 when a or b is not 16-byte aligned); [4 * n4, n) is the scalar tail.
extern "C" __global__ void sq_diff_partial_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ partial, long long n, long long n4) {
    long long stride = (long long)gridDim.x * blockDim.x;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float s = 0.0f;
    for (long long i = tid; i < n4; i += stride) {
        float4 x = a4[i];
        float4 y = b4[i];
        float dx = x.x - y.x, dy = x.y - y.y, dz = x.z - y.z, dw = x.w - y.w;
        s += (dx * dx + dy * dy) + (dz * dz + dw * dw);
    }
    for (long long i = 4 * n4 + tid; i < n; i += stride) {
        float d = a[i] - b[i];
        s += d * d;
    }
    s = block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(1024) final_mean_kernel(const float* __restrict__ partial, float* __restrict__ out,
                                                                     long long m, float inv_n) {
    float s = 0.0f;
    for (long long i = threadIdx.x; i < m; i += blockDim.x) s += partial[i];
    s = block_sum(s);
    if (threadIdx.x == 0) out[0] = s * inv_n;
}
"""

_module = cp.RawModule(code=CUDA_SOURCE)
_kernels = {}


def _k(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        a = predictions.contiguous()
        b = targets.contiguous()
        n = a.numel()
        n4 = n // 4 if a.data_ptr() % 16 == 0 and b.data_ptr() % 16 == 0 else 0
        work = max(n4, n - 4 * n4)
        blocks = max(1, min(MAX_BLOCKS, (work + BLOCK_SIZE - 1) // BLOCK_SIZE))
        partial = torch.empty(blocks, dtype=torch.float32, device=a.device)
        out = torch.empty((), dtype=torch.float32, device=a.device)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("sq_diff_partial_kernel")((blocks,), (BLOCK_SIZE,), (a.data_ptr(), b.data_ptr(), partial.data_ptr(), cp.int64(n), cp.int64(n4)))
            _k("final_mean_kernel")((1,), (FINAL_THREADS,), (partial.data_ptr(), out.data_ptr(), cp.int64(blocks), cp.float32(1.0 / n)))
        return out
