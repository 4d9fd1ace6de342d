#include <cuda_runtime.h>
#define C_E_SIZE 3

__global__ void cell_from_edges(const int* ceTable, const float* edge_val, const float* weights, float* out,
                                int ncells) {
    int pidx = blockIdx.x * blockDim.x + threadIdx.x;
    if (pidx >= ncells) return;
    float acc = 0.0f;
    for (int k = 0; k < C_E_SIZE; k++) {
        int e = ceTable[pidx * C_E_SIZE + k];  // cell-major table: lanes 12 bytes apart
        acc += edge_val[e] * weights[k * ncells + pidx];
    }
    out[pidx] = acc;
}

int main() {
    const int ncells = 1 << 20;
    int* table; float *edges, *w, *out;
    cudaMalloc(&table, ncells * C_E_SIZE * sizeof(int));
    cudaMalloc(&edges, 2 * ncells * sizeof(float));
    cudaMalloc(&w, ncells * C_E_SIZE * sizeof(float));
    cudaMalloc(&out, ncells * sizeof(float));
    cell_from_edges<<<(ncells + 127) / 128, 128>>>(table, edges, w, out, ncells);
    cudaDeviceSynchronize();
    return 0;
}
