// Direct port: one thread per body looping over all bodies in global memory (the warp
// reads the same j, so loads broadcast), IEEE sqrtf and division per pair.
#define BLOCK_SIZE 256

__global__ void nbody_naive(int n, float dt, float eps2, const float *pos, const float *vel, const float *mass,
                            float *pos_out, float *vel_out)
{
    int i = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    if (i >= n) return;
    float xi = pos[3 * i], yi = pos[3 * i + 1], zi = pos[3 * i + 2];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float dx = pos[3 * j] - xi, dy = pos[3 * j + 1] - yi, dz = pos[3 * j + 2] - zi;
        float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + eps2);
        float s = mass[j] * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    float vx = vel[3 * i] + dt * ax, vy = vel[3 * i + 1] + dt * ay, vz = vel[3 * i + 2] + dt * az;
    vel_out[3 * i] = vx;
    vel_out[3 * i + 1] = vy;
    vel_out[3 * i + 2] = vz;
    pos_out[3 * i] = xi + dt * vx;
    pos_out[3 * i + 1] = yi + dt * vy;
    pos_out[3 * i + 2] = zi + dt * vz;
}

extern "C" void kernel_nbody(int n, float dt, float softening, const float *pos, const float *vel,
                             const float *mass, float *pos_out, float *vel_out)
{
    if (n <= 0) return;
    nbody_naive<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(n, dt, softening * softening, pos, vel, mass,
                                                                   pos_out, vel_out);
}
