#include <cuda_runtime.h>
#define N_COMPONENTS 2

__global__ void optimize_vertex_thread(const int* rowptr, const int* cols, const float* emb, float* grad, int nv,
                                       float alpha) {
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < nv; v += gridDim.x * blockDim.x) {
        float g0 = 0.0f, g1 = 0.0f;
        for (int e = rowptr[v]; e < rowptr[v + 1]; e++) {
            int u = cols[e];
            float d0 = emb[v * N_COMPONENTS] - emb[u * N_COMPONENTS];
            float d1 = emb[v * N_COMPONENTS + 1] - emb[u * N_COMPONENTS + 1];
            float w = alpha / (1.0f + d0 * d0 + d1 * d1);
            g0 += w * d0;
            g1 += w * d1;
        }
        grad[v * N_COMPONENTS] = g0;
        grad[v * N_COMPONENTS + 1] = g1;
    }
}

int main() {
    const int nv = 1 << 20, ne = 15 * nv;
    int *rp, *c; float *emb, *g;
    cudaMalloc(&rp, (nv + 1) * sizeof(int));
    cudaMalloc(&c, ne * sizeof(int));
    cudaMalloc(&emb, nv * N_COMPONENTS * sizeof(float));
    cudaMalloc(&g, nv * N_COMPONENTS * sizeof(float));
    optimize_vertex_thread<<<(nv + 255) / 256, 256>>>(rp, c, emb, g, nv, 1.0f);
    cudaDeviceSynchronize();
    return 0;
}
