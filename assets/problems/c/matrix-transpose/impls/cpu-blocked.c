/* Square blocks: each block is copied row by row into a small local buffer, then written
   out column by column. Every cache line is used fully, and the local copy avoids the
   set conflicts of strided access when the row pitch is a power of two. */
#define BLOCK 64

void kernel_transpose(int rows, int cols, const float *restrict in, float *restrict out)
{
    float tmp[BLOCK][BLOCK];
    for (int r0 = 0; r0 < rows; r0 += BLOCK) {
        int nr = rows - r0 < BLOCK ? rows - r0 : BLOCK;
        for (int c0 = 0; c0 < cols; c0 += BLOCK) {
            int nc = cols - c0 < BLOCK ? cols - c0 : BLOCK;
            for (int i = 0; i < nr; i++) {
                const float *src = in + (long)(r0 + i) * cols + c0;
                for (int j = 0; j < nc; j++)
                    tmp[i][j] = src[j];
            }
            for (int j = 0; j < nc; j++) {
                float *dst = out + (long)(c0 + j) * rows + r0;
                for (int i = 0; i < nr; i++)
                    dst[i] = tmp[i][j];
            }
        }
    }
}
