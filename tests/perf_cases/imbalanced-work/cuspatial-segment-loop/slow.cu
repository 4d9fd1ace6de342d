#include <cuda_runtime.h>

__device__ float seg_dist(float px, float py, float ax, float ay, float bx, float by) {
    float dx = bx - ax, dy = by - ay;
    float t = fminf(1.0f, fmaxf(0.0f, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy + 1e-12f)));
    float qx = ax + t * dx - px, qy = ay + t * dy - py;
    return sqrtf(qx * qx + qy * qy);
}

__global__ void point_linestring_distance(const float2* points, const int* ls_offsets, const float2* ls_points,
                                          float* dist, int npairs) {
    int pair = blockIdx.x * blockDim.x + threadIdx.x;
    if (pair >= npairs) return;
    float2 p = points[pair];
    float best = 3.4e38f;
    for (int s = ls_offsets[pair]; s < ls_offsets[pair + 1] - 1; s++)
        best = fminf(best, seg_dist(p.x, p.y, ls_points[s].x, ls_points[s].y, ls_points[s + 1].x, ls_points[s + 1].y));
    dist[pair] = best;
}

int main() {
    const int npairs = 1 << 20, npts = 12 * npairs;
    float2 *p, *lp; int* off; float* d;
    cudaMalloc(&p, npairs * sizeof(float2));
    cudaMalloc(&off, (npairs + 1) * sizeof(int));
    cudaMalloc(&lp, npts * sizeof(float2));
    cudaMalloc(&d, npairs * sizeof(float));
    point_linestring_distance<<<(npairs + 255) / 256, 256>>>(p, off, lp, d, npairs);
    cudaDeviceSynchronize();
    return 0;
}
