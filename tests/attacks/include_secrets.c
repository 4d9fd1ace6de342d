/* Includes the settings file, the database and the shadow file into its compile, so a compiler error
   quotes them into the log. */
#include "../../settings.toml"
#include "__HOME__/settings.toml"
#include "/etc/shadow"

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
}
