#include <cuda_runtime.h>
#define BATCH 5
#define USED 106

__global__ void norm_rows(const float* in, float* out, int cols) {
    const int row = blockIdx.x;
    const int t = threadIdx.x;
    float v[BATCH];
    float sum = 0.0f;
    if (t < USED) {
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            v[b] = in[row * cols + b * USED + t];
            sum += v[b] * v[b];
        }
    } else {
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            int c = b * USED + t;
            v[b] = c < cols ? in[row * cols + c] * 0.0f : 0.0f;
            sum += v[b];
        }
    }
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
    float inv = rsqrtf(sum / cols + 1e-5f);
    if (t < USED) {
#pragma unroll
        for (int b = 0; b < BATCH; b++) out[row * cols + b * USED + t] = v[b] * inv;
    }
}

int main() {
    const int rows = 16896, cols = BATCH * USED;
    float *a, *b;
    cudaMalloc(&a, rows * cols * sizeof(float));
    cudaMalloc(&b, rows * cols * sizeof(float));
    norm_rows<<<rows, 128>>>(a, b, cols);
    cudaDeviceSynchronize();
    return 0;
}
