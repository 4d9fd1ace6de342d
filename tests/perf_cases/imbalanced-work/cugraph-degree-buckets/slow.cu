#include <cuda_runtime.h>

__global__ void pull_ranks(const int* offsets, const int* indices, const float* contrib, float* rank, int nv,
                           float damping) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nv) return;
    float sum = 0.0f;
    for (int e = offsets[v]; e < offsets[v + 1]; e++) sum += contrib[indices[e]];
    rank[v] = (1.0f - damping) / nv + damping * sum;
}

int main() {
    const int nv = 1 << 22, ne = 32 * nv;
    int *off, *idx; float *c, *r;
    cudaMalloc(&off, (nv + 1) * sizeof(int));
    cudaMalloc(&idx, (size_t)ne * sizeof(int));
    cudaMalloc(&c, nv * sizeof(float));
    cudaMalloc(&r, nv * sizeof(float));
    pull_ranks<<<(nv + 255) / 256, 256>>>(off, idx, c, r, nv, 0.85f);
    cudaDeviceSynchronize();
    return 0;
}
