#include <cuda_runtime.h>
#define HEAD_DIM 128
#define Q_ROWS 64
#define Q_STRIDE_WORDS (HEAD_DIM / 4 + 4)

__global__ void qk_scores(const unsigned* q_fp8, const unsigned* k_fp8, float* scores) {
    __shared__ unsigned q_words[Q_ROWS * Q_STRIDE_WORDS];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    for (int i = threadIdx.x; i < Q_ROWS * (HEAD_DIM / 4); i += blockDim.x)
        q_words[(i / (HEAD_DIM / 4)) * Q_STRIDE_WORDS + i % (HEAD_DIM / 4)] = q_fp8[blockIdx.x * Q_ROWS * (HEAD_DIM / 4) + i];
    __syncthreads();
    const int row = warp * 8 + lane / 4;
    const int col = lane % 4;
    unsigned acc = 0;
#pragma unroll
    for (int k = 0; k < HEAD_DIM / 16; k++) {
        unsigned a = q_words[row * Q_STRIDE_WORDS + k * 4 + col];
        acc += (unsigned)__dp4a((int)a, (int)k_fp8[k * 4 + col], 0);
    }
    scores[blockIdx.x * blockDim.x + threadIdx.x] = (float)acc;
}

int main() {
    const int tiles = 4096;
    unsigned *q, *k; float* s;
    cudaMalloc(&q, tiles * Q_ROWS * HEAD_DIM);
    cudaMalloc(&k, HEAD_DIM * 4);
    cudaMalloc(&s, tiles * 256 * sizeof(float));
    qk_scores<<<tiles, 256>>>(q, k, s);
    cudaDeviceSynchronize();
    return 0;
}
