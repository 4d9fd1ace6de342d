"""One thread per output element: the direct port of the seven-deep convolution loop."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
extern "C" __global__ void conv2d_naive(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ b, float* __restrict__ y,
                                        int NB, int C, int K, int H, int W, int OH, int OW, int R, int pad) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)NB * K * OH * OW;
    if (o >= total) return;
    int ow = (int)(o % OW);
    long long t = o / OW;
    int oh = (int)(t % OH);
    t /= OH;
    int k = (int)(t % K);
    int n = (int)(t / K);
    float acc = b[k];
    for (int c = 0; c < C; ++c) {
        const float* xp = x + ((long long)n * C + c) * H * W;
        const float* wp = w + ((long long)k * C + c) * R * R;
        for (int r = 0; r < R; ++r) {
            int ih = oh - pad + r;
            if (ih < 0 || ih >= H) continue;
            for (int s = 0; s < R; ++s) {
                int iw = ow - pad + s;
                if (iw < 0 || iw >= W) continue;
                acc += xp[(long long)ih * W + iw] * wp[r * R + s];
            }
        }
    }
    y[o] = acc;
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "conv2d_naive")


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # owns weight/bias with nn.Conv2d's initialisation; its forward is never called
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        w = self.conv.weight.contiguous()
        b = self.conv.bias.contiguous()
        NB, C, H, W = x.shape
        K, R = w.shape[0], w.shape[2]
        pad = self.conv.padding[0]
        OH, OW = H + 2 * pad - R + 1, W + 2 * pad - R + 1
        y = torch.empty(NB, K, OH, OW, dtype=x.dtype, device=x.device)
        total = y.numel()
        if total == 0:
            return y
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(((total + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                    (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int32(NB), cp.int32(C),
                     cp.int32(K), cp.int32(H), cp.int32(W), cp.int32(OH), cp.int32(OW), cp.int32(R), cp.int32(pad)))
        return y
