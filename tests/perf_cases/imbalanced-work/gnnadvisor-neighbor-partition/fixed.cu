#include <cuda_runtime.h>
#define DIM 16
#define PART 8

// one warp per neighbour partition of at most PART neighbours; lanes 0..DIM-1 take one feature each
__global__ void aggregate_partition_per_warp(const int* partptr, const int* part2node, const int* nbrs,
                                             const float* feat, float* out, int nparts) {
    int part = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (part >= nparts || lane >= DIM) return;
    int begin = partptr[part];
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < PART; k++) acc += feat[nbrs[begin + k] * DIM + lane];
    atomicAdd(&out[part2node[part] * DIM + lane], acc);
}

int main() {
    const int n = 1 << 20, ne = 20 * n, nparts = ne / PART;
    int *pp, *p2n, *nb; float *f, *o;
    cudaMalloc(&pp, (nparts + 1) * sizeof(int));
    cudaMalloc(&p2n, nparts * sizeof(int));
    cudaMalloc(&nb, ne * sizeof(int));
    cudaMalloc(&f, n * DIM * sizeof(float));
    cudaMalloc(&o, n * DIM * sizeof(float));
    aggregate_partition_per_warp<<<nparts / 4, 128>>>(pp, p2n, nb, f, o, nparts);
    cudaDeviceSynchronize();
    return 0;
}
