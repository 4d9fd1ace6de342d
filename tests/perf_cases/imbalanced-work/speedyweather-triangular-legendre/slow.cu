#include <cuda_runtime.h>
#define LMAX 512

__global__ void legendre_columns(const float* spec, const float* poly, float* out) {
    int m = threadIdx.x;
    float acc = 0.0f;
    for (int l = m; l < LMAX; l++) acc += spec[l * LMAX + m] * poly[l * LMAX + m];
    out[blockIdx.x * LMAX + m] = acc;
}

int main() {
    const int lat = 2048;
    float *s, *p, *o;
    cudaMalloc(&s, LMAX * LMAX * sizeof(float));
    cudaMalloc(&p, LMAX * LMAX * sizeof(float));
    cudaMalloc(&o, lat * LMAX * sizeof(float));
    legendre_columns<<<lat, LMAX>>>(s, p, o);
    cudaDeviceSynchronize();
    return 0;
}
