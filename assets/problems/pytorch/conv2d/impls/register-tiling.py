"""Register tiling over output channels: one staged input value feeds CO_TILE accumulators (3x3 kernels)."""
import cupy as cp
import torch

CO_TILE = 8  # output channels per block (multiple of 4: weights are read as float4)

CUDA_SOURCE = r"""
#ifndef CO_TILE
#define CO_TILE 8
#endif
#define T 16
#define KS 3
#define TS (T + KS - 1)

// Block (16, 16): a 16x16 output tile for CO_TILE output channels of one image.
// Grid: x = output tiles, y = output-channel groups, z = images (y and z loop when capped).
extern "C" __global__ void __launch_bounds__(256) conv_regtile(const float* __restrict__ x,
                                                                 const float* __restrict__ w,
                                                                 const float* __restrict__ b,
                                                                 float* __restrict__ y, int NB, int C, int K,
                                                                 int H, int W, int OH, int OW, int pad) {
    __shared__ float tile[TS][TS];
    __shared__ __align__(16) float ws[KS * KS][CO_TILE];  // ws[tap][j] = w[k0 + j][c][tap]
    int tiles_w = (OW + T - 1) / T;
    int ow0 = (blockIdx.x % tiles_w) * T, oh0 = (blockIdx.x / tiles_w) * T;
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * T + tx;
    int ow = ow0 + tx, oh = oh0 + ty;
    int groups = (K + CO_TILE - 1) / CO_TILE;
    for (int n = blockIdx.z; n < NB; n += gridDim.z) {
        for (int g = blockIdx.y; g < groups; g += gridDim.y) {
            int k0 = g * CO_TILE;
            float acc[CO_TILE];
#pragma unroll
            for (int j = 0; j < CO_TILE; ++j) acc[j] = 0.f;
            for (int c = 0; c < C; ++c) {
                const float* xp = x + ((long long)n * C + c) * H * W;
                for (int e = tid; e < TS * TS; e += T * T) {
                    int ih = oh0 - pad + e / TS, iw = ow0 - pad + e % TS;
                    tile[e / TS][e % TS] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xp[(long long)ih * W + iw] : 0.f;
                }
                for (int e = tid; e < KS * KS * CO_TILE; e += T * T) {
                    int tap = e / CO_TILE, j = e % CO_TILE, k = k0 + j;
                    ws[tap][j] = k < K ? w[((long long)k * C + c) * (KS * KS) + tap] : 0.f;
                }
                __syncthreads();
#pragma unroll
                for (int r = 0; r < KS; ++r)
#pragma unroll
                    for (int s = 0; s < KS; ++s) {
                        float v = tile[ty + r][tx + s];
#pragma unroll
                        for (int j = 0; j < CO_TILE; j += 4) {
                            float4 q = *reinterpret_cast<const float4*>(&ws[r * KS + s][j]);
                            acc[j] += v * q.x; acc[j + 1] += v * q.y; acc[j + 2] += v * q.z; acc[j + 3] += v * q.w;
                        }
                    }
                __syncthreads();
            }
            if (oh < OH && ow < OW) {
#pragma unroll
                for (int j = 0; j < CO_TILE; ++j) {
                    int k = k0 + j;
                    if (k < K) y[(((long long)n * K + k) * OH + oh) * OW + ow] = acc[j] + b[k];
                }
            }
        }
    }
}

// Any other kernel size: one thread per output.
extern "C" __global__ void conv_generic(const float* __restrict__ x, const float* __restrict__ w,
                                          const float* __restrict__ b, float* __restrict__ y,
                                          int NB, int C, int K, int H, int W, int OH, int OW, int R, int pad) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= (long long)NB * K * OH * OW) return;
    int ow = (int)(o % OW);
    long long t = o / OW;
    int oh = (int)(t % OH);
    t /= OH;
    int k = (int)(t % K), n = (int)(t / K);
    float acc = b[k];
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r) {
            int ih = oh - pad + r;
            if (ih < 0 || ih >= H) continue;
            for (int s = 0; s < R; ++s) {
                int iw = ow - pad + s;
                if (iw >= 0 && iw < W)
                    acc += x[(((long long)n * C + c) * H + ih) * W + iw] * w[(((long long)k * C + c) * R + r) * R + s];
            }
        }
    y[o] = acc;
}
"""

_module = cp.RawModule(code=CUDA_SOURCE, options=("-DCO_TILE=%d" % CO_TILE,))
_kernels = {}


def _get(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


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
        ptrs = (x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr())
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            if R == 3:
                tiles = ((OH + 15) // 16) * ((OW + 15) // 16)
                grid = (tiles, min((K + CO_TILE - 1) // CO_TILE, 65535), min(NB, 65535))
                _get("conv_regtile")(grid, (16, 16), ptrs + (cp.int32(NB), cp.int32(C), cp.int32(K), cp.int32(H),
                                                             cp.int32(W), cp.int32(OH), cp.int32(OW), cp.int32(pad)))
            else:
                total = y.numel()
                _get("conv_generic")(((total + 255) // 256,), (256,),
                                       ptrs + (cp.int32(NB), cp.int32(C), cp.int32(K), cp.int32(H), cp.int32(W),
                                               cp.int32(OH), cp.int32(OW), cp.int32(R), cp.int32(pad)))
        return y
