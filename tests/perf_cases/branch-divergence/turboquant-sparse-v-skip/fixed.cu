#include <cuda_runtime.h>
#include <stdint.h>
#define HEAD_DIM 128

__device__ float dequant(const int8_t* v, const float* scale, int row, int d) {
    return (float)v[row * HEAD_DIM + d] * scale[row];
}

__global__ void attn_v(const float* weights, const int8_t* v, const float* scale, float* out, int n_kv,
                       float threshold) {
    const int d = threadIdx.x;
    const int head = blockIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < n_kv; k++) {
        float w = weights[head * n_kv + (k + d) % n_kv];
        float x = dequant(v, scale, k, d);
        x = x * w + 0.5f * x * x * w;
        acc += x;
    }
    out[head * HEAD_DIM + d] = acc;
}

int main() {
    const int heads = 512, n_kv = 4096;
    float *w, *s, *o; int8_t* v;
    cudaMalloc(&w, heads * n_kv * sizeof(float));
    cudaMalloc(&v, n_kv * HEAD_DIM);
    cudaMalloc(&s, n_kv * sizeof(float));
    cudaMalloc(&o, heads * HEAD_DIM * sizeof(float));
    attn_v<<<heads, HEAD_DIM>>>(w, v, s, o, n_kv, 1e-4f);
    cudaDeviceSynchronize();
    return 0;
}
