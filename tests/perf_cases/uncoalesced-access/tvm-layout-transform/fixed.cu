#include <thrust/device_vector.h>
#define TILE 32

// one 32 x 32 tile of (c, w) per block: read along c, write along w
__global__ void nhwc_to_nchw_tiled(const float* in, float* out, int N, int H, int W, int C) {
    __shared__ float tile[TILE][TILE + 1];
    const int nh = blockIdx.z;
    const int w0 = blockIdx.x * TILE, c0 = blockIdx.y * TILE;
    const int n = nh / H, h = nh % H;
    for (int r = threadIdx.y; r < TILE; r += blockDim.y)
        tile[r][threadIdx.x] = in[(((long)n * H + h) * W + w0 + r) * C + c0 + threadIdx.x];
    __syncthreads();
    for (int r = threadIdx.y; r < TILE; r += blockDim.y)
        out[(((long)n * C + c0 + r) * H + h) * W + w0 + threadIdx.x] = tile[threadIdx.x][r];
}

int main() {
    const int N = 1, H = 384, W = 512, C = 128;
    thrust::device_vector<float> in((size_t)N * H * W * C), out((size_t)N * H * W * C);
    thrust::fill(in.begin(), in.end(), 1.0f);
    dim3 grid(W / TILE, C / TILE, N * H), block(TILE, 8);
    nhwc_to_nchw_tiled<<<grid, block>>>(thrust::raw_pointer_cast(in.data()), thrust::raw_pointer_cast(out.data()),
                                        N, H, W, C);
    cudaDeviceSynchronize();
    return 0;
}
