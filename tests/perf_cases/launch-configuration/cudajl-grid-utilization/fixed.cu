#include <cuda_runtime.h>

__global__ void particle_step(float4* ps, const float* field, int n, int substeps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 p = ps[i];
    for (int s = 0; s < substeps; s++) {
        float e = field[((int)(p.x * 64.0f) & 4095)];
        p.w += e * 0.001f;
        p.x += p.w * 0.001f;
    }
    ps[i] = p;
}

int main() {
    const int n = 65536;
    float4* ps; float* f;
    cudaMalloc(&ps, n * sizeof(float4));
    cudaMalloc(&f, 4096 * sizeof(float));
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    particle_step<<<blocks, threads>>>(ps, f, n, 1000);
    cudaDeviceSynchronize();
    return 0;
}
