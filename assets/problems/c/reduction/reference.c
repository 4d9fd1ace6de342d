void kernel_reduction(long n, const float *x, float *out)
{
    double acc = 0.0;
    for (long i = 0; i < n; i++)
        acc += x[i];
    out[0] = (float)acc;
}
