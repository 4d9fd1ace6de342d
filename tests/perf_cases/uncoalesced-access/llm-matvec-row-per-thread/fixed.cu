#include <cuda_runtime.h>

__global__ void matmul(const float* A, const float* x, int n, int d, float* out) {
    int i = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (i >= d) return;
    float sum = 0.0f;
    for (int j = lane; j < n; j += 32) {
        sum += A[n * i + j] * x[j];
    }
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (lane == 0) out[i] = sum;
}

int main() {
    const int n = 4096, d = 4096;
    float *A, *x, *out;
    cudaMalloc(&A, (size_t)n * d * sizeof(float));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&out, d * sizeof(float));
    matmul<<<d / 8, 256>>>(A, x, n, d, out);
    cudaDeviceSynchronize();
    return 0;
}
