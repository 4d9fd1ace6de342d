/* Writes through a null pointer. Verdict: runtime_error (worker crashed, replaced). */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    volatile float *nowhere = 0;
    nowhere[n] = alpha * x[0];
    y[0] = 0.0f;
}
