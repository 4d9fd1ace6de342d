/* Writes nothing, hoping the output buffer still holds an earlier answer. Caught by: correctness (outputs
   poisoned before every call, so they are named as never written, not mistaken for a cached result). */
void kernel_scale(int n, float alpha, const float *x, float *y)
{
    (void)n; (void)alpha; (void)x; (void)y;
}
