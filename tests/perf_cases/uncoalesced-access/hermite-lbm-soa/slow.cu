#include <cuda_runtime.h>
#define Q 19

__global__ void collide(const float* f_in, float* f_out, float omega, int nodes) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= nodes) return;
    float rho = 0.0f;
    for (int q = 0; q < Q; q++) rho += f_in[idx * Q + q];
    for (int q = 0; q < Q; q++) {
        float f = f_in[idx * Q + q];
        f_out[idx * Q + q] = f - omega * (f - rho / Q);
    }
}

int main() {
    const int nodes = 128 * 128 * 64;
    float *a, *b;
    cudaMalloc(&a, nodes * Q * sizeof(float));
    cudaMalloc(&b, nodes * Q * sizeof(float));
    collide<<<(nodes + 255) / 256, 256>>>(a, b, 1.2f, nodes);
    cudaDeviceSynchronize();
    return 0;
}
