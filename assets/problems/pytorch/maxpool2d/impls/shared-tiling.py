"""Stage the input patch under a 32 x BLOCK_ROWS output tile in shared memory; overlapping windows reread it there."""
import cupy as cp
import torch

BLOCK_ROWS = 8

CUDA_SOURCE = r"""
__device__ __forceinline__ float vmax(float m, float v) { return (v > m || v != v) ? v : m; }

// Block (32, BLOCK_ROWS) = one output tile of one (n, c) plane. Grid: x = tile column,
// y = tile row, z = plane (y and z loop when capped at 65535). Out-of-image cells hold -inf.
extern "C" __global__ void pool_tiled(const float* __restrict__ x, float* __restrict__ y, long long planes,
                                         int H, int W, int OH, int OW, int k, int s, int p) {
    extern __shared__ float tile[];  // TH x TW floats
    const float NEG_INF = -__int_as_float(0x7f800000);
    int TH = (blockDim.y - 1) * s + k, TW = (blockDim.x - 1) * s + k;
    int tid = threadIdx.y * blockDim.x + threadIdx.x, nthr = blockDim.x * blockDim.y;
    int ow0 = blockIdx.x * blockDim.x;
    int tiles_h = (OH + blockDim.y - 1) / blockDim.y;
    for (long long plane = blockIdx.z; plane < planes; plane += gridDim.z) {
        const float* xp = x + plane * H * W;
        for (int th = blockIdx.y; th < tiles_h; th += gridDim.y) {
            int oh0 = th * blockDim.y;
            int ih0 = oh0 * s - p, iw0 = ow0 * s - p;
            for (int e = tid; e < TH * TW; e += nthr) {
                int ih = ih0 + e / TW, iw = iw0 + e % TW;
                tile[e] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xp[(long long)ih * W + iw] : NEG_INF;
            }
            __syncthreads();
            int oh = oh0 + threadIdx.y, ow = ow0 + threadIdx.x;
            if (oh < OH && ow < OW) {
                const float* t = tile + threadIdx.y * s * TW + threadIdx.x * s;
                float m = NEG_INF;
                for (int r = 0; r < k; ++r)
                    for (int q = 0; q < k; ++q) m = vmax(m, t[r * TW + q]);
                y[(plane * OH + oh) * OW + ow] = m;
            }
            __syncthreads();
        }
    }
}

// Fallback when the patch would not fit in 48 KiB of shared memory (very large kernel or stride).
extern "C" __global__ void pool_flat(const float* __restrict__ x, float* __restrict__ y, long long planes,
                                        int H, int W, int OH, int OW, int k, int s, int p) {
    long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= planes * OH * OW) return;
    int ow = (int)(o % OW);
    long long t = o / OW;
    int oh = (int)(t % OH);
    const float* xp = x + (t / OH) * H * W;
    float m = -__int_as_float(0x7f800000);
    for (int r = 0; r < k; ++r) {
        int ih = oh * s - p + r;
        if (ih < 0 || ih >= H) continue;
        for (int q = 0; q < k; ++q) {
            int iw = ow * s - p + q;
            if (iw >= 0 && iw < W) m = vmax(m, xp[(long long)ih * W + iw]);
        }
    }
    y[o] = m;
}
"""

_module = cp.RawModule(code=CUDA_SOURCE)
_kernels = {}


def _get(name):
    if name not in _kernels:
        _kernels[name] = _module.get_function(name)
    return _kernels[name]


class ModelNew(torch.nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.k, self.s, self.p = kernel_size, stride, padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        NB, C, H, W = x.shape
        k, s, p = self.k, self.s, self.p
        OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
        y = torch.empty(NB, C, OH, OW, dtype=x.dtype, device=x.device)
        if y.numel() == 0:
            return y
        args = (x.data_ptr(), y.data_ptr(), cp.int64(NB * C), cp.int32(H), cp.int32(W), cp.int32(OH),
                cp.int32(OW), cp.int32(k), cp.int32(s), cp.int32(p))
        smem = ((BLOCK_ROWS - 1) * s + k) * (31 * s + k) * 4
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            if smem <= 48 * 1024:
                grid = ((OW + 31) // 32, min((OH + BLOCK_ROWS - 1) // BLOCK_ROWS, 65535), min(NB * C, 65535))
                _get("pool_tiled")(grid, (32, BLOCK_ROWS), args, shared_mem=smem)
            else:
                n = y.numel()
                _get("pool_flat")(((n + 255) // 256,), (256,), args)
        return y
