"""Warp per row with 128-bit loads: 512 bytes per warp instruction keeps more of DRAM's bandwidth in flight."""
import cupy as cp
import torch

ROWS_PER_BLOCK = 4

CUDA_SOURCE = r"""
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// K % 4 == 0, A and x 16-byte aligned; blockDim = (32, rows per block).
extern "C" __global__ void matvec_warp_vec4_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                                   long long M, long long K) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= M) return;
    const float4* a = reinterpret_cast<const float4*>(A + r * K);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    long long K4 = K / 4;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K4; k += 32) {
        float4 u = a[k], v = x4[k];
        s += (u.x * v.x + u.y * v.y) + (u.z * v.z + u.w * v.w);
    }
    s = warp_sum(s);
    if (threadIdx.x == 0) y[r] = s;
}

extern "C" __global__ void matvec_warp_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                              long long M, long long K) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= M) return;
    const float* a = A + r * K;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K; k += 32) s += a[k] * x[k];
    s = warp_sum(s);
    if (threadIdx.x == 0) y[r] = s;
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

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        y = torch.empty(M, 1, dtype=A.dtype, device=A.device)
        vec = K % 4 == 0 and A.data_ptr() % 16 == 0 and B.data_ptr() % 16 == 0
        name = "matvec_warp_vec4_kernel" if vec else "matvec_warp_kernel"
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k(name)(((M + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK,), (32, ROWS_PER_BLOCK),
                     (A.data_ptr(), B.data_ptr(), y.data_ptr(), cp.int64(M), cp.int64(K)))
        return y
