#include <thrust/device_vector.h>

__global__ void nhwc_to_nchw(const float* in, float* out, int N, int H, int W, int C) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long)N * H * W * C) return;
    int c = i % C;
    long rest = i / C;
    int w = rest % W; rest /= W;
    int h = rest % H;
    int n = rest / H;
    out[((long)(n * C + c) * H + h) * W + w] = in[i];
}

int main() {
    const int N = 1, H = 384, W = 512, C = 128;
    thrust::device_vector<float> in((size_t)N * H * W * C), out((size_t)N * H * W * C);
    thrust::fill(in.begin(), in.end(), 1.0f);
    const long total = (long)N * H * W * C;
    nhwc_to_nchw<<<(total + 255) / 256, 256>>>(thrust::raw_pointer_cast(in.data()),
                                                thrust::raw_pointer_cast(out.data()), N, H, W, C);
    cudaDeviceSynchronize();
    return 0;
}
