"""Captures its kernel in a CUDA graph per input shape and replays it: honest (static buffers, one replay)."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_graph(const float* __restrict__ x, float* __restrict__ y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : 0.f; }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "relu_graph")


def _launch(x, y):
    n = x.numel()
    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        _kernel(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int64(n)))


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.graphs = {}

    def forward(self, x):
        key = (tuple(x.shape), x.dtype)
        if key not in self.graphs:
            static_x, static_y = torch.empty_like(x), torch.empty_like(x)
            warm = torch.cuda.Stream()
            warm.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(warm):
                _launch(static_x, static_y)
            torch.cuda.current_stream().wait_stream(warm)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                _launch(static_x, static_y)
            self.graphs[key] = (graph, static_x, static_y)
        graph, static_x, static_y = self.graphs[key]
        static_x.copy_(x)
        graph.replay()
        return static_y
