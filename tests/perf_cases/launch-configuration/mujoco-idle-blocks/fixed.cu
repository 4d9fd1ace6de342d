#include <cuda_runtime.h>
#define NV 32

__global__ void jtdaj(const float* J, const float* D, const int* nefc, float* H) {
    const int i = threadIdx.x / NV, j = threadIdx.x % NV;
    float acc = 0.0f;
    for (int efc = blockIdx.x; efc < nefc[0]; efc += gridDim.x) acc += J[efc * NV + i] * D[efc] * J[efc * NV + j];
    atomicAdd(&H[i * NV + j], acc);
}

int main() {
    const int njmax = 1 << 20;
    float *J, *D, *H; int* nefc;
    cudaMalloc(&J, njmax * NV * sizeof(float));
    cudaMalloc(&D, njmax * sizeof(float));
    cudaMalloc(&H, NV * NV * sizeof(float));
    cudaMalloc(&nefc, sizeof(int));
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    jtdaj<<<4 * sms, NV * NV>>>(J, D, nefc, H);
    cudaDeviceSynchronize();
    return 0;
}
