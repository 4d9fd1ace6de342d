// Classic tiled all-pairs: the block stages BLOCK_SIZE bodies at a time as float4
// (x, y, z, m) in shared memory and every thread sweeps the tile with rsqrtf. Bodies past
// n are padded with zero mass, which contributes exactly nothing.
#define BLOCK_SIZE 128

__global__ void nbody_tiled(int n, float dt, float eps2, const float *__restrict__ pos, const float *__restrict__ vel,
                            const float *__restrict__ mass, float *__restrict__ pos_out, float *__restrict__ vel_out)
{
    __shared__ float4 tile[BLOCK_SIZE];
    const int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float xi = 0.0f, yi = 0.0f, zi = 0.0f;
    if (i < n) {
        xi = pos[3 * i];
        yi = pos[3 * i + 1];
        zi = pos[3 * i + 2];
    }
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j0 = 0; j0 < n; j0 += BLOCK_SIZE) {
        int j = j0 + threadIdx.x;
        tile[threadIdx.x] = j < n ? make_float4(pos[3 * j], pos[3 * j + 1], pos[3 * j + 2], mass[j])
                                  : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < BLOCK_SIZE; k++) {
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
    if (i < n) {
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
    nbody_tiled<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(n, dt, softening * softening, pos, vel, mass,
                                                                   pos_out, vel_out);
}
