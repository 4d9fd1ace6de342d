#include <cuda_runtime.h>
#define NUM_SPECIES 9

__global__ void cf_rhs(const double* yvec, const double* rates, double* ydot, int ncells) {
    int cell = blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= ncells) return;
    for (int s = 0; s < NUM_SPECIES; s++) {
        double y = yvec[cell * NUM_SPECIES + s];
        ydot[cell * NUM_SPECIES + s] = rates[s] * y;
    }
}

int main() {
    const int ncells = 1 << 20;
    double *y, *r, *yd;
    cudaMalloc(&y, (size_t)ncells * NUM_SPECIES * sizeof(double));
    cudaMalloc(&yd, (size_t)ncells * NUM_SPECIES * sizeof(double));
    cudaMalloc(&r, NUM_SPECIES * sizeof(double));
    cf_rhs<<<ncells / 128, 128>>>(y, r, yd, ncells);
    cudaDeviceSynchronize();
    return 0;
}
