#include <cuda_runtime.h>

__global__ void convolution_kernel(const float* conc_old, float* conc_lap, const float* mask, int nx, int ny, int nm) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < nm / 2 || x >= nx - nm / 2 || y < nm / 2 || y >= ny - nm / 2) return;
    float value = 0.0f;
    for (int j = -nm / 2; j < nm / 2 + 1; j++)
        for (int i = -nm / 2; i < nm / 2 + 1; i++)
            value += mask[(j + nm / 2) * nm + i + nm / 2] * conc_old[(y + j) * nx + x + i];
    conc_lap[y * nx + x] = value;
}

int main() {
    const int nx = 4096, ny = 4096, nm = 3;
    float *a, *b, *m;
    cudaMalloc(&a, nx * ny * sizeof(float));
    cudaMalloc(&b, nx * ny * sizeof(float));
    cudaMalloc(&m, nm * nm * sizeof(float));
    dim3 block(32, 8), grid(nx / 32, ny / 8);
    convolution_kernel<<<grid, block>>>(a, b, m, nx, ny, nm);
    cudaDeviceSynchronize();
    return 0;
}
