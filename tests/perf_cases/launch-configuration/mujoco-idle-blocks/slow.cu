#include <cuda_runtime.h>
#define NV 32

__global__ void jtdaj(const float* J, const float* D, const int* nefc, float* H) {
    const int efc = blockIdx.x;
    if (efc >= nefc[0]) return;
    const int i = threadIdx.x / NV, j = threadIdx.x % NV;
    float d = D[efc];
    atomicAdd(&H[i * NV + j], J[efc * NV + i] * d * J[efc * NV + j]);
}

int main() {
    const int njmax = 1 << 20;
    float *J, *D, *H; int* nefc;
    cudaMalloc(&J, njmax * NV * sizeof(float));
    cudaMalloc(&D, njmax * sizeof(float));
    cudaMalloc(&H, NV * NV * sizeof(float));
    cudaMalloc(&nefc, sizeof(int));
    jtdaj<<<njmax, NV * NV>>>(J, D, nefc, H);
    cudaDeviceSynchronize();
    return 0;
}
