/* Positions and masses are copied to separate x/y/z/m arrays so the inner loop is
   unit-stride; LANES independent partial sums (the compiler may not reorder a float
   reduction itself) and a call-free rsqrt let it vectorize the pair loop. Summation
   order and the last bits of 1/sqrt differ from the reference. */
#include <math.h>
#include <stdlib.h>

#define LANES 8

/* 1/sqrt(x) for x > 0 without a libm call (sqrtf keeps errno handling, which blocks
   vectorization): bit-trick estimate plus three Newton steps, accurate to a few ulp. */
static inline float rsqrt_newton(float x)
{
    union { float f; unsigned u; } c;
    c.f = x;
    c.u = 0x5f375a86u - (c.u >> 1);
    float y = c.f;
    y = y * (1.5f - 0.5f * x * y * y);
    y = y * (1.5f - 0.5f * x * y * y);
    y = y * (1.5f - 0.5f * x * y * y);
    return y;
}

void kernel_nbody(int n, float dt, float softening, const float *pos, const float *vel,
                  const float *mass, float *pos_out, float *vel_out)
{
    float eps2 = softening * softening;
    float *buf = malloc((size_t)4 * n * sizeof(float));
    if (!buf)
        return;
    float *restrict px = buf, *restrict py = buf + n, *restrict pz = buf + 2 * (size_t)n, *restrict pm = buf + 3 * (size_t)n;
    for (int j = 0; j < n; j++) {
        px[j] = pos[3 * j];
        py[j] = pos[3 * j + 1];
        pz[j] = pos[3 * j + 2];
        pm[j] = mass[j];
    }
    for (int i = 0; i < n; i++) {
        float xi = px[i], yi = py[i], zi = pz[i];
        float sx[LANES] = {0}, sy[LANES] = {0}, sz[LANES] = {0};
        int j = 0;
        for (; j + LANES <= n; j += LANES)
            for (int l = 0; l < LANES; l++) {
                float dx = px[j + l] - xi, dy = py[j + l] - yi, dz = pz[j + l] - zi;
                float inv = rsqrt_newton(dx * dx + dy * dy + dz * dz + eps2);
                float s = pm[j + l] * inv * inv * inv;
                sx[l] += dx * s;
                sy[l] += dy * s;
                sz[l] += dz * s;
            }
        for (; j < n; j++) {
            float dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
            float inv = 1.0f / sqrtf(dx * dx + dy * dy + dz * dz + eps2);
            float s = pm[j] * inv * inv * inv;
            sx[0] += dx * s;
            sy[0] += dy * s;
            sz[0] += dz * s;
        }
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
        for (int l = 0; l < LANES; l++) {
            ax += sx[l];
            ay += sy[l];
            az += sz[l];
        }
        float vx = vel[3 * i] + dt * ax, vy = vel[3 * i + 1] + dt * ay, vz = vel[3 * i + 2] + dt * az;
        vel_out[3 * i] = vx;
        vel_out[3 * i + 1] = vy;
        vel_out[3 * i + 2] = vz;
        pos_out[3 * i] = xi + dt * vx;
        pos_out[3 * i + 1] = yi + dt * vy;
        pos_out[3 * i + 2] = zi + dt * vz;
    }
    free(buf);
}
