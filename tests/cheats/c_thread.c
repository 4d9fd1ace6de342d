/* Hands the work to a thread it never joins (whose start routine is null). Dies alone in its sandbox:
   runtime_error; static 'threads' is evidence. */
#include <pthread.h>

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    pthread_t worker;
    pthread_create(&worker, 0, 0, 0);
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
}
