#include <cuda_runtime.h>

__global__ void pull_ranks_warp(const int* offsets, const int* indices, const float* contrib, float* rank, int nv,
                                float damping) {
    int v = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (v >= nv) return;
    float sum = 0.0f;
    for (int e = offsets[v] + lane; e < offsets[v + 1]; e += 32) sum += contrib[indices[e]];
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffff, sum, o);
    if (lane == 0) rank[v] = (1.0f - damping) / nv + damping * sum;
}

int main() {
    const int nv = 1 << 22, ne = 32 * nv;
    int *off, *idx; float *c, *r;
    cudaMalloc(&off, (nv + 1) * sizeof(int));
    cudaMalloc(&idx, (size_t)ne * sizeof(int));
    cudaMalloc(&c, nv * sizeof(float));
    cudaMalloc(&r, nv * sizeof(float));
    pull_ranks_warp<<<nv / 8, 256>>>(off, idx, c, r, nv, 0.85f);
    cudaDeviceSynchronize();
    return 0;
}
