/* Computes once per buffer address and replays the saved answer on later calls (a pointer-keyed cache).
   Caught by: runtime 'result-caching' (the same buffers get new values between calls). */
#include <stdlib.h>
#include <string.h>

static const float *cached_x;
static float *cached_y;
static int cached_n;

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    if (x == cached_x && n == cached_n) {
        memcpy(y, cached_y, sizeof(float) * n);
        return;
    }
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
    free(cached_y);
    cached_y = malloc(sizeof(float) * n);
    memcpy(cached_y, y, sizeof(float) * n);
    cached_x = x;
    cached_n = n;
}
