#include <cuda_runtime.h>
#define NM 3

__global__ void convolution_kernel(const float* conc_old, float* conc_lap, const float* mask, int nx, int ny) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < NM / 2 || x >= nx - NM / 2 || y < NM / 2 || y >= ny - NM / 2) return;
    float value = 0.0f;
#pragma unroll
    for (int j = -NM / 2; j < NM / 2 + 1; j++)
#pragma unroll
        for (int i = -NM / 2; i < NM / 2 + 1; i++)
            value += mask[(j + NM / 2) * NM + i + NM / 2] * conc_old[(y + j) * nx + x + i];
    conc_lap[y * nx + x] = value;
}

int main() {
    const int nx = 4096, ny = 4096;
    float *a, *b, *m;
    cudaMalloc(&a, nx * ny * sizeof(float));
    cudaMalloc(&b, nx * ny * sizeof(float));
    cudaMalloc(&m, NM * NM * sizeof(float));
    dim3 block(32, 8), grid(nx / 32, ny / 8);
    convolution_kernel<<<grid, block>>>(a, b, m, nx, ny);
    cudaDeviceSynchronize();
    return 0;
}
