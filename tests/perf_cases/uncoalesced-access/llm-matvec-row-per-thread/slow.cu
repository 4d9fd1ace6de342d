#include <cuda_runtime.h>

__global__ void matmul(const float* A, const float* x, int n, int d, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d) return;
    float sum = 0.0f;
    for (int j = 0; j < n; j++) {
        sum += A[n * i + j] * x[j];
    }
    out[i] = sum;
}

int main() {
    const int n = 4096, d = 4096;
    float *A, *x, *out;
    cudaMalloc(&A, (size_t)n * d * sizeof(float));
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&out, d * sizeof(float));
    matmul<<<(d + 1023) / 1024, 1024>>>(A, x, n, d, out);
    cudaDeviceSynchronize();
    return 0;
}
