/* Exports the wrong function name. Verdict: load_error. */
void kernel_scaled(int n, float alpha, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
}
