#include <cuda_runtime.h>
#define NSTATES 6

__global__ void fit_tracks(const float* meas, float* states, int ntracks, int nhits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ntracks) return;
    float s[NSTATES];
    for (int k = 0; k < NSTATES; k++) s[k] = states[k * ntracks + i];
    for (int h = 0; h < nhits; h++) {
        float m = meas[h * ntracks + i];
        float r = m - s[0];
#pragma unroll
        for (int k = 0; k < NSTATES; k++) s[k] += 0.1f * r * (k + 1);
    }
    for (int k = 0; k < NSTATES; k++) states[k * ntracks + i] = s[k];
}

int main() {
    const int ntracks = 1 << 20, nhits = 20;
    float *m, *s;
    cudaMalloc(&m, (size_t)nhits * ntracks * sizeof(float));
    cudaMalloc(&s, NSTATES * ntracks * sizeof(float));
    fit_tracks<<<ntracks / 64, 64>>>(m, s, ntracks, nhits);
    cudaDeviceSynchronize();
    return 0;
}
