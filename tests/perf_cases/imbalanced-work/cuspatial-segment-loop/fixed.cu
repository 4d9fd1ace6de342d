#include <cuda_runtime.h>

__device__ float seg_dist(float px, float py, float ax, float ay, float bx, float by) {
    float dx = bx - ax, dy = by - ay;
    float t = fminf(1.0f, fmaxf(0.0f, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy + 1e-12f)));
    float qx = ax + t * dx - px, qy = ay + t * dy - py;
    return sqrtf(qx * qx + qy * qy);
}

// one thread per segment; seg_pair[s] names the pair segment s belongs to; dist holds float bits (non-negative)
__global__ void point_linestring_distance_lb(const float2* points, const int* seg_pair, const float2* ls_points,
                                             int* dist_bits, int nsegs) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nsegs) return;
    int pair = seg_pair[s];
    float2 p = points[pair];
    float d = seg_dist(p.x, p.y, ls_points[s].x, ls_points[s].y, ls_points[s + 1].x, ls_points[s + 1].y);
    atomicMin(&dist_bits[pair], __float_as_int(d));
}

int main() {
    const int npairs = 1 << 20, nsegs = 11 * npairs;
    float2 *p, *lp; int *sp, *d;
    cudaMalloc(&p, npairs * sizeof(float2));
    cudaMalloc(&sp, nsegs * sizeof(int));
    cudaMalloc(&lp, (nsegs + 1) * sizeof(float2));
    cudaMalloc(&d, npairs * sizeof(int));
    point_linestring_distance_lb<<<(nsegs + 255) / 256, 256>>>(p, sp, lp, d, nsegs);
    cudaDeviceSynchronize();
    return 0;
}
