#include <string.h>

void kernel_histogram(int n, const int *data, int *bins)
{
    memset(bins, 0, 256 * sizeof(int));
    for (int i = 0; i < n; i++)
        bins[data[i]]++;
}
