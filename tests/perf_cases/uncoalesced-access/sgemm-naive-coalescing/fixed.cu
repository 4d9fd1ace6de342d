#include <cuda_runtime.h>
#define BLOCKSIZE 32

__global__ void sgemm_coalesce(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                               float* C) {
    const unsigned x = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
    const unsigned y = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
    if (x < M && y < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i) tmp += A[x * K + i] * B[i * N + y];
        C[x * N + y] = alpha * tmp + beta * C[x * N + y];
    }
}

int main() {
    const int M = 4096, N = 4096, K = 4096;
    float *A, *B, *C;
    cudaMalloc(&A, (size_t)M * K * sizeof(float));
    cudaMalloc(&B, (size_t)K * N * sizeof(float));
    cudaMalloc(&C, (size_t)M * N * sizeof(float));
    dim3 grid((M + 31) / 32, (N + 31) / 32);
    sgemm_coalesce<<<grid, BLOCKSIZE * BLOCKSIZE>>>(M, N, K, 1.0f, A, B, 0.0f, C);
    cudaDeviceSynchronize();
    return 0;
}
