/* Zeroes its input after using it. Caught by: runtime 'input-mutation'. */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    float *writable = (float *)x;
    for (int i = 0; i < n; i++) {
        y[i] = alpha * x[i] + 1.0f;
        writable[i] = 0.0f;
    }
}
