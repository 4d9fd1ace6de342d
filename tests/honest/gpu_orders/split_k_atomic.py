"""Honest: split-K with atomics. K is cut into chunks of 1024, one block column per chunk; each thread sums its
output element's products over the chunk in fp32 and adds that partial into a zeroed output with atomicAdd,
so the chunks land in whatever order the blocks finish (nondeterministic, every order fp32)."""
import cupy as cp
import torch

CHUNK = 1024
THREADS = 128

CUDA_SOURCE = r"""
extern "C" __global__ void matmul_split_k_atomic(const float* __restrict__ a, const float* __restrict__ b,
                                                 float* __restrict__ c, int m, int n, int k, int chunk) {
    long long idx = (long long)blockIdx.y * blockDim.x + threadIdx.x;
    if (idx >= (long long)m * n) return;
    int row = (int)(idx / n), col = (int)(idx % n);
    long long start = (long long)blockIdx.x * chunk;
    long long stop = start + chunk < k ? start + chunk : k;
    const float* arow = a + (long long)row * k;
    float partial = 0.f;
    for (long long p = start; p < stop; ++p) partial += arow[p] * b[p * n + col];
    atomicAdd(c + idx, partial);
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_split_k_atomic")


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        m, k = a.shape
        n = b.shape[1]
        c = torch.zeros(m, n, device=a.device, dtype=a.dtype)
        if c.numel() == 0 or k == 0:
            return c
        grid = ((k + CHUNK - 1) // CHUNK, (m * n + THREADS - 1) // THREADS)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (THREADS,), (a.data_ptr(), b.data_ptr(), c.data_ptr(), cp.int32(m), cp.int32(n),
                                       cp.int32(k), cp.int32(CHUNK)))
        return c
