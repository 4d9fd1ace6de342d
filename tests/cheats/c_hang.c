/* Never returns. Verdict: timeout. */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    volatile int spin = 1;
    while (spin)
        ;
    y[0] = alpha * x[0] + (float)n;
}
