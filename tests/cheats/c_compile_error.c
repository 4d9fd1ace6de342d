/* Does not compile. Verdict: compile_error. */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + undefined_name;
}
