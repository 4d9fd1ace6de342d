#include <cuda_runtime.h>
#define LMAX 512

// thread t takes column t and column LMAX - 1 - t: every thread runs LMAX + 1 trips in all
__global__ void legendre_column_pairs(const float* spec, const float* poly, float* out) {
    int t = threadIdx.x;
    int m2 = LMAX - 1 - t;
    float a = 0.0f, b = 0.0f;
    for (int k = 0; k < LMAX + 1; k++) {
        if (k < LMAX - t) {
            int l = t + k;
            a += spec[l * LMAX + t] * poly[l * LMAX + t];
        } else {
            int l = m2 + (k - (LMAX - t));
            b += spec[l * LMAX + m2] * poly[l * LMAX + m2];
        }
    }
    out[blockIdx.x * LMAX + t] = a;
    out[blockIdx.x * LMAX + m2] = b;
}

int main() {
    const int lat = 2048;
    float *s, *p, *o;
    cudaMalloc(&s, LMAX * LMAX * sizeof(float));
    cudaMalloc(&p, LMAX * LMAX * sizeof(float));
    cudaMalloc(&o, lat * LMAX * sizeof(float));
    legendre_column_pairs<<<lat, LMAX / 2>>>(s, p, o);
    cudaDeviceSynchronize();
    return 0;
}
