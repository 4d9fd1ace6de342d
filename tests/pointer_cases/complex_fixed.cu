#include <cuda_runtime.h>
#include <thrust/complex.h>

// the decimated samples stored contiguously by the producer: lanes read neighbouring elements
__global__ void decimate(const thrust::complex<float>* in, thrust::complex<float>* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

int main() {
    const int n = 1 << 16;
    thrust::complex<float> *in, *out;
    cudaMalloc(&in, n * sizeof(thrust::complex<float>));
    cudaMalloc(&out, n * sizeof(thrust::complex<float>));
    decimate<<<n / 256, 256>>>(in, out, n);
    cudaDeviceSynchronize();
    return 0;
}
