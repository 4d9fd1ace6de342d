// Tile staged through shared memory; one column of padding keeps the transposed
// read of the tile free of bank conflicts.
#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_tiled(int rows, int cols, const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int tiles_y = (rows + TILE_DIM - 1) / TILE_DIM;
    for (int ty = blockIdx.y; ty < tiles_y; ty += gridDim.y) {
        int r0 = ty * TILE_DIM, c0 = blockIdx.x * TILE_DIM;
        int c = c0 + threadIdx.x;
        for (int j = threadIdx.y; j < TILE_DIM; j += BLOCK_ROWS) {
            int r = r0 + j;
            if (r < rows && c < cols)
                tile[j][threadIdx.x] = in[(long long)r * cols + c];
        }
        __syncthreads();
        int r = r0 + threadIdx.x;
        for (int j = threadIdx.y; j < TILE_DIM; j += BLOCK_ROWS) {
            int oc = c0 + j;
            if (oc < cols && r < rows)
                out[(long long)oc * rows + r] = tile[threadIdx.x][j];
        }
        __syncthreads();
    }
}

extern "C" void kernel_transpose(int rows, int cols, const float *in, float *out)
{
    int gy = (rows + TILE_DIM - 1) / TILE_DIM;
    dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, gy < 65535 ? gy : 65535);
    transpose_tiled<<<grid, dim3(TILE_DIM, BLOCK_ROWS)>>>(rows, cols, in, out);
}
