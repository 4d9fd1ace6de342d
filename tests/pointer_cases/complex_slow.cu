#include <cuda_runtime.h>
#include <thrust/complex.h>

// every tenth sample of a complex signal: lanes 10 elements (80 bytes) apart
__global__ void decimate(const thrust::complex<float>* in, thrust::complex<float>* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * 10];
}

int main() {
    const int n = 1 << 16;
    thrust::complex<float> *in, *out;
    cudaMalloc(&in, 10 * n * sizeof(thrust::complex<float>));
    cudaMalloc(&out, n * sizeof(thrust::complex<float>));
    decimate<<<n / 256, 256>>>(in, out, n);
    cudaDeviceSynchronize();
    return 0;
}
