/* Computes only the first half of the output. Caught by: correctness (outputs poisoned, never written). */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    for (int i = 0; i < n / 2; i++)
        y[i] = alpha * x[i] + 1.0f;
}
