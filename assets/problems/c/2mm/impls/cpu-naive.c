/* PolyBench's loop nests as written: i-j-k dot products, right operands walked down columns. */
void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                float *tmp, const float *A, const float *B, const float *C, float *D)
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            float acc = 0.f;
            for (int k = 0; k < nk; k++)
                acc += alpha * A[(long)i * nk + k] * B[(long)k * nj + j];
            tmp[(long)i * nj + j] = acc;
        }
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nl; j++) {
            float acc = beta * D[(long)i * nl + j];
            for (int k = 0; k < nj; k++)
                acc += tmp[(long)i * nj + k] * C[(long)k * nl + j];
            D[(long)i * nl + j] = acc;
        }
}
