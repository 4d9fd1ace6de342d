/* PolyBench 4.2 gemm: C = alpha*A*B + beta*C, row-major, PolyBench's i-k-j loop order. */
void kernel_gemm(int ni, int nj, int nk, float alpha, float beta,
                 float *C, const float *A, const float *B)
{
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++)
            C[(long)i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                C[(long)i * nj + j] += alpha * A[(long)i * nk + k] * B[(long)k * nj + j];
    }
}
