"""WMMA tensor-core GEMM: zero-padded shared-memory slabs make any M, N, K legal for 16x16x16 fragments."""
import cupy as cp
import torch

CUDA_SOURCE = r"""
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#define BM 64
#define BN 64
#define BK 32
#define LDA (BK + 8)   // padded strides: multiples of 8 halves / 4 floats, fragment starts stay 32-byte aligned
#define LDB (BN + 8)
#define LDC (BN + 4)

// 128 threads = 4 warps in a 2 x 2 layout; each warp owns a 32 x 32 sub-tile (2 x 2 fragments).
// vec != 0 requires A, B 16-byte aligned and K % 8 == 0, N % 8 == 0 (8-half global loads).
extern "C" __global__ void __launch_bounds__(128) matmul_wmma(const __half* __restrict__ A,
                                                              const __half* __restrict__ B,
                                                              __half* __restrict__ C,
                                                              int M, int N, int K, int vec) {
    __shared__ __align__(32) __half As[BM * LDA];
    __shared__ __align__(32) __half Bs[BK * LDB];
    __shared__ __align__(32) float Cs[BM * LDC];
    const __half zero = __float2half(0.f);
    int tid = threadIdx.x, warp = tid >> 5;
    int wm = warp >> 1, wn = warp & 1;
    int col0 = blockIdx.x * BN;
    int tiles_m = (M + BM - 1) / BM;
    for (int tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
        int row0 = tm * BM;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

        for (int k0 = 0; k0 < K; k0 += BK) {
            if (vec) {
                for (int e = tid; e < BM * (BK / 8); e += 128) {
                    int r = e / (BK / 8), c = (e % (BK / 8)) * 8;
                    int gr = row0 + r, gc = k0 + c;
                    uint4 v = make_uint4(0u, 0u, 0u, 0u);
                    if (gr < M && gc < K) v = *reinterpret_cast<const uint4*>(A + (long long)gr * K + gc);
                    *reinterpret_cast<uint4*>(&As[r * LDA + c]) = v;
                }
                for (int e = tid; e < BK * (BN / 8); e += 128) {
                    int r = e / (BN / 8), c = (e % (BN / 8)) * 8;
                    int gr = k0 + r, gc = col0 + c;
                    uint4 v = make_uint4(0u, 0u, 0u, 0u);
                    if (gr < K && gc < N) v = *reinterpret_cast<const uint4*>(B + (long long)gr * N + gc);
                    *reinterpret_cast<uint4*>(&Bs[r * LDB + c]) = v;
                }
            } else {
                for (int e = tid; e < BM * BK; e += 128) {
                    int r = e / BK, c = e % BK;
                    int gr = row0 + r, gc = k0 + c;
                    As[r * LDA + c] = (gr < M && gc < K) ? A[(long long)gr * K + gc] : zero;
                }
                for (int e = tid; e < BK * BN; e += 128) {
                    int r = e / BN, c = e % BN;
                    int gr = k0 + r, gc = col0 + c;
                    Bs[r * LDB + c] = (gr < K && gc < N) ? B[(long long)gr * N + gc] : zero;
                }
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < BK; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &As[(wm * 32 + i * 16) * LDA + kk], LDA);
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &Bs[kk * LDB + wn * 32 + j * 16], LDB);
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
                wmma::store_matrix_sync(&Cs[(wm * 32 + i * 16) * LDC + wn * 32 + j * 16], acc[i][j], LDC,
                                        wmma::mem_row_major);
        __syncthreads();
        for (int e = tid; e < BM * BN; e += 128) {
            int r = e / BN, c = e % BN;
            int gr = row0 + r, gc = col0 + c;
            if (gr < M && gc < N) C[(long long)gr * N + gc] = __float2half(Cs[r * LDC + c]);
        }
        __syncthreads();
    }
}
"""

_kernel = cp.RawKernel(CUDA_SOURCE, "matmul_wmma")


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, dtype=A.dtype, device=A.device)
        if C.numel() == 0:
            return C
        vec = int(K % 8 == 0 and N % 8 == 0 and A.data_ptr() % 16 == 0 and B.data_ptr() % 16 == 0)
        grid = ((N + 63) // 64, min((M + 63) // 64, 65535))
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            _kernel(grid, (128,), (A.data_ptr(), B.data_ptr(), C.data_ptr(),
                                   cp.int32(M), cp.int32(N), cp.int32(K), cp.int32(vec)))
        return C
