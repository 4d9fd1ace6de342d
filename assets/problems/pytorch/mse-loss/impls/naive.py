"""Textbook first reduction: one element per thread, divergent interleaved tree, then a second pass over partials."""
import cupy as cp
import torch

BLOCK_SIZE = 256
FINAL_THREADS = 1024

CUDA_SOURCE = r"""
extern "C" __global__ void sq_diff_partial_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* __restrict__ partial, long long n) {
    extern __shared__ float buf[];
    unsigned tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    float d = i < n ? a[i] - b[i] : 0.0f;
    buf[tid] = d * d;
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0 && tid + s < blockDim.x) buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = buf[0];
}

// One block of 1024 threads: strided sums of the partials, then a shared-memory tree; writes sum * inv_n.
extern "C" __global__ void __launch_bounds__(1024) final_mean_kernel(const float* __restrict__ partial, float* __restrict__ out,
                                                                     long long m, float inv_n) {
    __shared__ float buf[1024];
    unsigned tid = threadIdx.x;
    float s = 0.0f;
    for (long long i = tid; i < m; i += blockDim.x) s += partial[i];
    buf[tid] = s;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h /= 2) {
        if (tid < h) buf[tid] += buf[tid + h];
        __syncthreads();
    }
    if (tid == 0) out[0] = buf[0] * inv_n;
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
        blocks = (n + BLOCK_SIZE - 1) // BLOCK_SIZE
        partial = torch.empty(blocks, dtype=torch.float32, device=a.device)
        out = torch.empty((), dtype=torch.float32, device=a.device)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("sq_diff_partial_kernel")((blocks,), (BLOCK_SIZE,), (a.data_ptr(), b.data_ptr(), partial.data_ptr(), cp.int64(n)),
                                         shared_mem=BLOCK_SIZE * 4)
            _k("final_mean_kernel")((1,), (FINAL_THREADS,), (partial.data_ptr(), out.data_ptr(), cp.int64(blocks), cp.float32(1.0 / n)))
        return out
