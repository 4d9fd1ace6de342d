#include <cuda_runtime.h>
#define BM 128
#define BK 8
#define AS_STRIDE (BM + 4)

// the A tile of each K step is stored transposed into As, as the kernel's main loop over K does
__global__ void load_a_transposed(const float* A, float* out, int K) {
    __shared__ float As[BK * AS_STRIDE];
    const int innerRowA = threadIdx.x / (BK / 4);
    const int innerColA = threadIdx.x % (BK / 4);
    float acc = 0.0f;
    for (int bk = 0; bk < K; bk += BK) {
        float4 tmp = reinterpret_cast<const float4*>(&A[(blockIdx.x * BM + innerRowA) * K + bk + innerColA * 4])[0];
        As[(innerColA * 4 + 0) * AS_STRIDE + innerRowA] = tmp.x;
        As[(innerColA * 4 + 1) * AS_STRIDE + innerRowA] = tmp.y;
        As[(innerColA * 4 + 2) * AS_STRIDE + innerRowA] = tmp.z;
        As[(innerColA * 4 + 3) * AS_STRIDE + innerRowA] = tmp.w;
        __syncthreads();
        for (int k = 0; k < BK; k++) acc += As[k * AS_STRIDE + threadIdx.x % BM];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

int main() {
    const int M = 4096, K = 4096;
    float *A, *o;
    cudaMalloc(&A, M * K * sizeof(float));
    cudaMalloc(&o, M * 2 * sizeof(float));
    load_a_transposed<<<M / BM, 256>>>(A, o, K);
    cudaDeviceSynchronize();
    return 0;
}
