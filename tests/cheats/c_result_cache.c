/* Skips the work when called again on the same buffers (a pointer-keyed cache). Caught by: 'result-caching'. */
static const float *last_x;
static float *last_y;

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    if (x == last_x && y == last_y)
        return;
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
    last_x = x;
    last_y = y;
}
