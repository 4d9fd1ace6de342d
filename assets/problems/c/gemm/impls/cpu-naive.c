/* Textbook i-j-k: one dot product per C element, walking B down a column (cache-hostile). */
void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                 float *C, const float *A, const float *B)
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            float acc = 0.f;
            for (int k = 0; k < nk; k++)
                acc += A[(long)i * nk + k] * B[(long)k * nj + j];
            C[(long)i * nj + j] = alpha * acc + beta * C[(long)i * nj + j];
        }
}
