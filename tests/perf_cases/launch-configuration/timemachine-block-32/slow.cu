#include <cuda_runtime.h>

__global__ void nonbonded(const float3* x, float3* f, int n, float cutoff2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float3 xi = x[i];
    float3 fi = make_float3(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < 256; j++) {
        float3 xj = x[(i + j + 1) % n];
        float dx = xi.x - xj.x, dy = xi.y - xj.y, dz = xi.z - xj.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        float inv = r2 < cutoff2 ? rsqrtf(r2 + 1e-6f) : 0.0f;
        float s = inv * inv * inv;
        fi.x += s * dx; fi.y += s * dy; fi.z += s * dz;
    }
    f[i] = fi;
}

int main() {
    const int n = 23558;
    float3 *x, *f;
    cudaMalloc(&x, n * sizeof(float3));
    cudaMalloc(&f, n * sizeof(float3));
    const int tpb = 32;
    nonbonded<<<(n + tpb - 1) / tpb, tpb>>>(x, f, n, 1.44f);
    cudaDeviceSynchronize();
    return 0;
}
