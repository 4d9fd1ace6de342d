#include <cuda_runtime.h>
#define DIM 16

__global__ void aggregate_node_per_thread(const int* nodeptr, const int* nbrs, const float* feat, float* out, int n) {
    int node = blockIdx.x * blockDim.x + threadIdx.x;
    if (node >= n) return;
    for (int d = 0; d < DIM; d++) {
        float acc = 0.0f;
        for (int e = nodeptr[node]; e < nodeptr[node + 1]; e++) acc += feat[nbrs[e] * DIM + d];
        out[node * DIM + d] = acc;
    }
}

int main() {
    const int n = 1 << 20, ne = 20 * n;
    int *np, *nb; float *f, *o;
    cudaMalloc(&np, (n + 1) * sizeof(int));
    cudaMalloc(&nb, ne * sizeof(int));
    cudaMalloc(&f, n * DIM * sizeof(float));
    cudaMalloc(&o, n * DIM * sizeof(float));
    aggregate_node_per_thread<<<(n + 127) / 128, 128>>>(np, nb, f, o, n);
    cudaDeviceSynchronize();
    return 0;
}
