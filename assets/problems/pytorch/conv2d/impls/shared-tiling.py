"""Each input channel's (16+R-1)^2 halo tile is staged once in shared memory and read R*R times."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
#define T 16

// Block (16, 16): a 16x16 output tile of one (image, output channel) plane.
// Grid: x = output tiles, y = output channels, z = images (y and z loop when capped at 65535).
extern "C" __global__ void conv2d_tiled(const float* __restrict__ x, const float* __restrict__ w,
                                        const float* __restrict__ b, float* __restrict__ y,
                                        int NB, int C, int K, int H, int W, int OH, int OW, int R, int pad) {
    extern __shared__ float tile[];  // (T + R - 1)^2 floats
    int TS = T + R - 1;
    int tiles_w = (OW + T - 1) / T;
    int ow0 = (blockIdx.x % tiles_w) * T, oh0 = (blockIdx.x / tiles_w) * T;
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * T + tx;
    int ow = ow0 + tx, oh = oh0 + ty;
    for (int n = blockIdx.z; n < NB; n += gridDim.z) {
        for (int k = blockIdx.y; k < K; k += gridDim.y) {
            float acc = 0.f;
            for (int c = 0; c < C; ++c) {
                const float* xp = x + ((long long)n * C + c) * H * W;
                for (int e = tid; e < TS * TS; e += T * T) {
                    int ih = oh0 - pad + e / TS, iw = ow0 - pad + e % TS;
                    tile[e] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xp[(long long)ih * W + iw] : 0.f;
                }
                __syncthreads();
                const float* wp = w + ((long long)k * C + c) * R * R;
                for (int r = 0; r < R; ++r)
                    for (int s = 0; s < R; ++s) acc += tile[(ty + r) * TS + tx + s] * wp[r * R + s];
                __syncthreads();
            }
            if (oh < OH && ow < OW) y[(((long long)n * K + k) * OH + oh) * OW + ow] = acc + b[k];
        }
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "conv2d_tiled")


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
        if y.numel() == 0:
            return y
        tiles = ((OH + 15) // 16) * ((OW + 15) // 16)
        grid = (tiles, min(K, 65535), min(NB, 65535))
        smem = (16 + R - 1) ** 2 * 4
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (16, 16),
                    (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int32(NB), cp.int32(C),
                     cp.int32(K), cp.int32(H), cp.int32(W), cp.int32(OH), cp.int32(OW), cp.int32(R), cp.int32(pad)),
                    shared_mem=smem)
        return y
