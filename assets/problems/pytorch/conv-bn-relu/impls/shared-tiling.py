"""Stage input patches and weights in shared memory; OC_TILE channels per thread reuse each loaded pixel."""
import cupy as cp
import torch

OC_TILE = 8

CUDA_SOURCE = r"""
#ifndef KS
#define KS 3
#endif
#ifndef OC_TILE
#define OC_TILE 8
#endif
#define TS 16
#define IC_CHUNK 4
#define PATCH (TS + KS - 1)

// wf = w * s, bf = (b - mean) * s + beta with s = gamma / sqrt(var + eps); one thread per weight.
extern "C" __global__ void fold_bn_kernel(const float* __restrict__ w, const float* __restrict__ b,
                                          const float* __restrict__ mean, const float* __restrict__ var,
                                          const float* __restrict__ gamma, const float* __restrict__ beta,
                                          float* __restrict__ wf, float* __restrict__ bf, int OC, int per_oc, float eps) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)OC * per_oc) return;
    int oc = (int)(t / per_oc);
    float s = gamma[oc] / sqrtf(var[oc] + eps);
    wf[t] = w[t] * s;
    if (t % per_oc == 0) bf[oc] = (b[oc] - mean[oc]) * s + beta[oc];
}

// blockDim = (TS, TS). Block = (image n, channel group of OC_TILE, TS x TS output tile), flattened into blockIdx.x.
extern "C" __global__ void __launch_bounds__(256) conv_relu_tiled_kernel(const float* __restrict__ x, const float* __restrict__ wf,
                                                                         const float* __restrict__ bf, float* __restrict__ y,
                                                                         int C, int H, int W, int OC,
                                                                         int tiles_h, int tiles_w, int oc_tiles) {
    __shared__ float xs[IC_CHUNK][PATCH][PATCH];
    __shared__ __align__(16) float ws[IC_CHUNK][KS * KS][OC_TILE];
    long long b = blockIdx.x;
    int tw = (int)(b % tiles_w); b /= tiles_w;
    int th = (int)(b % tiles_h); b /= tiles_h;
    int og = (int)(b % oc_tiles);
    long long n = b / oc_tiles;
    int oc0 = og * OC_TILE, oh0 = th * TS, ow0 = tw * TS;
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TS + tx;
    const int pad = KS / 2;
    float acc[OC_TILE];
#pragma unroll
    for (int o = 0; o < OC_TILE; ++o) acc[o] = 0.0f;
    for (int c0 = 0; c0 < C; c0 += IC_CHUNK) {
        for (int i = tid; i < IC_CHUNK * PATCH * PATCH; i += TS * TS) {
            int c = i / (PATCH * PATCH), r = (i / PATCH) % PATCH, q = i % PATCH;
            int ic = c0 + c, ih = oh0 - pad + r, iw = ow0 - pad + q;
            xs[c][r][q] = (ic < C && ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[((n * C + ic) * H + ih) * W + iw] : 0.0f;
        }
        for (int i = tid; i < IC_CHUNK * KS * KS * OC_TILE; i += TS * TS) {
            int o = i % OC_TILE, t = (i / OC_TILE) % (KS * KS), c = i / (OC_TILE * KS * KS);
            int oc = oc0 + o, ic = c0 + c;
            ws[c][t][o] = (oc < OC && ic < C) ? wf[((long long)oc * C + ic) * (KS * KS) + t] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int c = 0; c < IC_CHUNK; ++c)
#pragma unroll
            for (int ky = 0; ky < KS; ++ky)
#pragma unroll
                for (int kx = 0; kx < KS; ++kx) {
                    float v = xs[c][ty + ky][tx + kx];
#pragma unroll
                    for (int o = 0; o < OC_TILE; ++o) acc[o] += v * ws[c][ky * KS + kx][o];
                }
        __syncthreads();
    }
    int oh = oh0 + ty, ow = ow0 + tx;
    if (oh < H && ow < W) {
#pragma unroll
        for (int o = 0; o < OC_TILE; ++o) {
            int oc = oc0 + o;
            if (oc < OC) y[((n * OC + oc) * H + oh) * W + ow] = fmaxf(acc[o] + bf[oc], 0.0f);
        }
    }
}
"""

_modules = {}


def _k(name, ks):
    if ks not in _modules:
        _modules[ks] = (cp.RawModule(code=CUDA_SOURCE, options=("-DKS=%d" % ks, "-DOC_TILE=%d" % OC_TILE)), {})
    module, kernels = _modules[ks]
    if name not in kernels:
        kernels[name] = module.get_function(name)
    return kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = torch.nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        w = self.conv.weight.contiguous()
        OC, ks = w.shape[0], w.shape[2]
        per_oc = C * ks * ks
        wf = torch.empty_like(w)
        bf = torch.empty(OC, dtype=x.dtype, device=x.device)
        y = torch.empty(N, OC, H, W, dtype=x.dtype, device=x.device)
        tiles_h, tiles_w = (H + 15) // 16, (W + 15) // 16
        oc_tiles = (OC + OC_TILE - 1) // OC_TILE
        bn = self.bn
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("fold_bn_kernel", ks)(((OC * per_oc + 255) // 256,), (256,),
                                     (w.data_ptr(), self.conv.bias.data_ptr(), bn.running_mean.data_ptr(), bn.running_var.data_ptr(),
                                      bn.weight.data_ptr(), bn.bias.data_ptr(), wf.data_ptr(), bf.data_ptr(),
                                      cp.int32(OC), cp.int32(per_oc), cp.float32(bn.eps)))
            _k("conv_relu_tiled_kernel", ks)((N * oc_tiles * tiles_h * tiles_w,), (16, 16),
                                             (x.data_ptr(), wf.data_ptr(), bf.data_ptr(), y.data_ptr(), cp.int32(C), cp.int32(H),
                                              cp.int32(W), cp.int32(OC), cp.int32(tiles_h), cp.int32(tiles_w), cp.int32(oc_tiles)))
        return y
