#include <cuda_runtime.h>
#define N_COMPONENTS 2

__global__ void optimize_vertex_warp(const int* rowptr, const int* cols, const float* emb, float* grad, int nv,
                                     float alpha) {
    const int lane = threadIdx.x % 32;
    const int warps = gridDim.x * blockDim.x / 32;
    for (int v = (blockIdx.x * blockDim.x + threadIdx.x) / 32; v < nv; v += warps) {
        float g0 = 0.0f, g1 = 0.0f;
        for (int e = rowptr[v] + lane; e < rowptr[v + 1]; e += 32) {
            int u = cols[e];
            float d0 = emb[v * N_COMPONENTS] - emb[u * N_COMPONENTS];
            float d1 = emb[v * N_COMPONENTS + 1] - emb[u * N_COMPONENTS + 1];
            float w = alpha / (1.0f + d0 * d0 + d1 * d1);
            g0 += w * d0;
            g1 += w * d1;
        }
        for (int o = 16; o > 0; o /= 2) {
            g0 += __shfl_down_sync(0xffffffff, g0, o);
            g1 += __shfl_down_sync(0xffffffff, g1, o);
        }
        if (lane == 0) {
            grad[v * N_COMPONENTS] = g0;
            grad[v * N_COMPONENTS + 1] = g1;
        }
    }
}

int main() {
    const int nv = 1 << 20, ne = 15 * nv;
    int *rp, *c; float *emb, *g;
    cudaMalloc(&rp, (nv + 1) * sizeof(int));
    cudaMalloc(&c, ne * sizeof(int));
    cudaMalloc(&emb, nv * N_COMPONENTS * sizeof(float));
    cudaMalloc(&g, nv * N_COMPONENTS * sizeof(float));
    optimize_vertex_warp<<<nv / 8, 256>>>(rp, c, emb, g, nv, 1.0f);
    cudaDeviceSynchronize();
    return 0;
}
