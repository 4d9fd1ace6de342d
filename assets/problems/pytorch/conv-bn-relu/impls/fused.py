"""Eval-mode BN is an affine map per channel: fold it into the conv weights, then conv + ReLU in one pass."""
import cupy as cp
import torch

BLOCK_SIZE = 256

CUDA_SOURCE = r"""
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

// One thread per output (n, oc, oh, ow); stride 1, zero padding ks / 2; ReLU on store.
extern "C" __global__ void conv2d_relu_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                              const float* __restrict__ bias, float* __restrict__ y,
                                              int N, int C, int H, int W, int OC, int ks) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)N * OC * H * W;
    if (t >= total) return;
    int ow = (int)(t % W);
    int oh = (int)((t / W) % H);
    int oc = (int)((t / ((long long)W * H)) % OC);
    int n = (int)(t / ((long long)W * H * OC));
    int pad = ks / 2;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c) {
        const float* xc = x + ((long long)n * C + c) * H * W;
        const float* wc = w + ((long long)oc * C + c) * ks * ks;
        for (int ky = 0; ky < ks; ++ky) {
            int ih = oh + ky - pad;
            if (ih < 0 || ih >= H) continue;
            for (int kx = 0; kx < ks; ++kx) {
                int iw = ow + kx - pad;
                if (iw < 0 || iw >= W) continue;
                acc += xc[(long long)ih * W + iw] * wc[ky * ks + kx];
            }
        }
    }
    y[t] = fmaxf(acc + bias[oc], 0.0f);
}
"""

_module = cp.RawModule(code=CUDA_SOURCE)
_kernels = {}


def _k(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


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
        total = N * OC * H * W
        bn = self.bn
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _k("fold_bn_kernel")(((OC * per_oc + 255) // 256,), (256,),
                                 (w.data_ptr(), self.conv.bias.data_ptr(), bn.running_mean.data_ptr(), bn.running_var.data_ptr(),
                                  bn.weight.data_ptr(), bn.bias.data_ptr(), wf.data_ptr(), bf.data_ptr(),
                                  cp.int32(OC), cp.int32(per_oc), cp.float32(bn.eps)))
            _k("conv2d_relu_kernel")(((total + BLOCK_SIZE - 1) // BLOCK_SIZE,), (BLOCK_SIZE,),
                                     (x.data_ptr(), wf.data_ptr(), bf.data_ptr(), y.data_ptr(),
                                      cp.int32(N), cp.int32(C), cp.int32(H), cp.int32(W), cp.int32(OC), cp.int32(ks)))
        return y
