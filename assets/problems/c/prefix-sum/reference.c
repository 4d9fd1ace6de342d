void kernel_prefix_sum(int n, const int *in, int *out)
{
    int acc = 0;
    for (int i = 0; i < n; i++) {
        acc += in[i];
        out[i] = acc;
    }
}
