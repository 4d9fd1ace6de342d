/* Hands the work to a thread it never joins. Caught by: static 'threads'. */
#include <pthread.h>

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    pthread_t worker;
    pthread_create(&worker, 0, 0, 0);
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
}
