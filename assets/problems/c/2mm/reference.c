/* PolyBench 4.2 2mm: tmp = alpha*A*B, then D = beta*D + tmp*C.
   Loops run i-k-j rather than PolyBench's i-j-k: every element still receives its products in
   the same k order, so the result is bit-identical, without walking B and C down columns. */
void kernel_2mm(int ni, int nj, int nk, int nl, float alpha, float beta,
                float *tmp, const float *A, const float *B, const float *C, float *D)
{
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++)
            tmp[(long)i * nj + j] = 0.0f;
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                tmp[(long)i * nj + j] += alpha * A[(long)i * nk + k] * B[(long)k * nj + j];
    }
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nl; j++)
            D[(long)i * nl + j] *= beta;
        for (int k = 0; k < nj; k++)
            for (int j = 0; j < nl; j++)
                D[(long)i * nl + j] += tmp[(long)i * nj + k] * C[(long)k * nl + j];
    }
}
