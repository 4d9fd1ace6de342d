#include <cuda_runtime.h>

struct track { float x, y, z, px, py, pz, q, path; };

__global__ void propagate(track* tracks, const float* field, int n, int steps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    track t = tracks[i];
    for (int s = 0; s < steps; s++) {
        float b = field[(s * 7 + i) & 1023];
        float px = t.px + t.q * (t.py * b);
        float py = t.py - t.q * (t.px * b);
        t.px = px; t.py = py;
        t.x += t.px * 0.01f; t.y += t.py * 0.01f; t.z += t.pz * 0.01f;
        t.path += 0.01f;
    }
    tracks[i] = t;
}

int main() {
    const int n = 1 << 20;
    track* t; float* f;
    cudaMalloc(&t, n * sizeof(track));
    cudaMalloc(&f, 1024 * sizeof(float));
    const int block = 64;
    propagate<<<(n + block - 1) / block, block>>>(t, f, n, 100);
    cudaDeviceSynchronize();
    return 0;
}
