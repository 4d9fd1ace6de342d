#include <cuda_runtime.h>
#define LX 8

__global__ void ax_helm_kernel(float* w, const float* u, const float* dx, int nel) {
    __shared__ float shdx[LX][LX + 1];
    __shared__ float shu[LX][LX + 1];
    const int e = blockIdx.x;
    const int i = threadIdx.x;
    const int j = threadIdx.y;
    shdx[j][i] = dx[j * LX + i];
    shu[j][i] = u[e * LX * LX + j * LX + i];
    __syncthreads();
    float wr = 0.0f;
    for (int l = 0; l < LX; l++) wr += shdx[i][l] * shu[j][l];
    w[e * LX * LX + j * LX + i] = wr;
}

int main() {
    const int nel = 1 << 16;
    float *w, *u, *dx;
    cudaMalloc(&w, nel * LX * LX * sizeof(float));
    cudaMalloc(&u, nel * LX * LX * sizeof(float));
    cudaMalloc(&dx, LX * LX * sizeof(float));
    ax_helm_kernel<<<nel, dim3(LX, LX)>>>(w, u, dx, nel);
    cudaDeviceSynchronize();
    return 0;
}
