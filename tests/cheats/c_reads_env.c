/* Reads the environment. Caught by: static 'environment'. */
#include <stdlib.h>

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    const char *hint = getenv("REFINERY_ANSWER");
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + (hint ? 1.0f : 1.0f);
}
