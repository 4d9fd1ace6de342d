"""Keep cuBLAS for the GEMM and fuse only what follows it: bias and ReLU in one pass over the output."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
extern "C" __global__ void bias_relu_kernel(float* __restrict__ y, const float* __restrict__ bias, long long n, int N) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(y[i] + bias[i % N], 0.0f);
}
"""

_bias_relu = cp.RawKernel(CUDA_SOURCE, "bias_relu_kernel")


class ModelNew(torch.nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.mm(x, self.linear.weight.t()).contiguous()
        b = self.linear.bias.contiguous()
        n = y.numel()
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _bias_relu(((n + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                       (y.data_ptr(), b.data_ptr(), cp.int64(n), cp.int32(y.shape[1])))
        return y
