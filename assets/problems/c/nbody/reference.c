#include <math.h>

void kernel_nbody(int n, float dt, float softening, const float *pos, const float *vel, const float *mass,
                  float *pos_out, float *vel_out)
{
    float eps2 = softening * softening;
    for (int i = 0; i < n; i++) {
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
}
