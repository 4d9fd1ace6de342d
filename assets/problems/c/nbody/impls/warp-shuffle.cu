// Tiled all-pairs with the j range split over SPLIT adjacent lanes per body: SPLIT times
// more threads, which matters when n / BLOCK_SIZE is below a few blocks per SM. Each lane
// sums every SPLIT-th body of the tile; the partial forces are combined with shuffles.
#define BLOCK_SIZE 256
#define SPLIT 4
#define FULL 0xffffffffu

__global__ void nbody_split(int n, float dt, float eps2, const float *__restrict__ pos, const float *__restrict__ vel,
                            const float *__restrict__ mass, float *__restrict__ pos_out, float *__restrict__ vel_out)
{
    __shared__ float4 tile[BLOCK_SIZE];
    const int sub = threadIdx.x % SPLIT;
    const int i = blockIdx.x * (BLOCK_SIZE / SPLIT) + threadIdx.x / SPLIT;
    float xi = 0.0f, yi = 0.0f, zi = 0.0f;
    if (i < n) {
        xi = pos[3 * i];
        yi = pos[3 * i + 1];
        zi = pos[3 * i + 2];
    }
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    // every thread stays to the end: all of them load tiles and join the shuffles
    for (int j0 = 0; j0 < n; j0 += BLOCK_SIZE) {
        int j = j0 + threadIdx.x;
        tile[threadIdx.x] = j < n ? make_float4(pos[3 * j], pos[3 * j + 1], pos[3 * j + 2], mass[j])
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 4
        for (int k = sub; k < BLOCK_SIZE; k += SPLIT) {
            float4 b = tile[k];
            float dx = b.x - xi, dy = b.y - yi, dz = b.z - zi;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
            float s = b.w * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
#pragma unroll
    for (int d = SPLIT / 2; d > 0; d >>= 1) {
        ax += __shfl_xor_sync(FULL, ax, d);
        ay += __shfl_xor_sync(FULL, ay, d);
        az += __shfl_xor_sync(FULL, az, d);
    }
    if (sub == 0 && i < n) {
        float vx = vel[3 * i] + dt * ax, vy = vel[3 * i + 1] + dt * ay, vz = vel[3 * i + 2] + dt * az;
        vel_out[3 * i] = vx;
        vel_out[3 * i + 1] = vy;
        vel_out[3 * i + 2] = vz;
        pos_out[3 * i] = xi + dt * vx;
        pos_out[3 * i + 1] = yi + dt * vy;
        pos_out[3 * i + 2] = zi + dt * vz;
    }
}

extern "C" void kernel_nbody(int n, float dt, float softening, const float *pos, const float *vel,
                             const float *mass, float *pos_out, float *vel_out)
{
    if (n <= 0) return;
    const int per_block = BLOCK_SIZE / SPLIT;
    nbody_split<<<(n + per_block - 1) / per_block, BLOCK_SIZE>>>(n, dt, softening * softening, pos, vel, mass,
                                                                 pos_out, vel_out);
}
