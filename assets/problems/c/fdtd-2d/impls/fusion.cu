// Whole time step in one kernel: each thread recomputes the two neighbouring E values
// that its hz update needs from the old hz, so no second pass is required. Reads and
// writes go to separate buffers (ping-pong) because neighbours still need old values.
// One step moves 3 reads + 3 writes per point instead of about 9.
#define BLOCK_X 32
#define BLOCK_Y 8

__global__ void fdtd_step(int nx, int ny, const float *__restrict__ ex0, const float *__restrict__ ey0,
                          const float *__restrict__ hz0, float *__restrict__ ex1, float *__restrict__ ey1,
                          float *__restrict__ hz1, const float *__restrict__ fict, int t)
{
    int j = blockIdx.x * BLOCK_X + threadIdx.x;
    if (j >= ny) return;
    for (int i = blockIdx.y * BLOCK_Y + threadIdx.y; i < nx; i += gridDim.y * BLOCK_Y) {
        long long c = (long long)i * ny + j;
        float h = hz0[c];
        float eyn = i == 0 ? fict[t] : ey0[c] - 0.5f * (h - hz0[c - ny]);
        float exn = j == 0 ? ex0[c] : ex0[c] - 0.5f * (h - hz0[c - 1]);
        ey1[c] = eyn;
        ex1[c] = exn;
        if (i < nx - 1 && j < ny - 1) {
            float exr = ex0[c + 1] - 0.5f * (hz0[c + 1] - h);     // new ex[i][j+1]
            float eyd = ey0[c + ny] - 0.5f * (hz0[c + ny] - h);   // new ey[i+1][j]
            h -= 0.7f * (exr - exn + eyd - eyn);
        }
        hz1[c] = h;
    }
}

extern "C" void kernel_fdtd_2d(int tmax, int nx, int ny, float *ex, float *ey, float *hz, const float *fict)
{
    if (tmax <= 0) return;
    size_t sz = (size_t)nx * ny;
    float *tmp;
    cudaMalloc(&tmp, 3 * sz * sizeof(float));
    float *cur[3] = {ex, ey, hz}, *nxt[3] = {tmp, tmp + sz, tmp + 2 * sz};
    int gy = (nx + BLOCK_Y - 1) / BLOCK_Y;
    dim3 grid((ny + BLOCK_X - 1) / BLOCK_X, gy < 65535 ? gy : 65535), block(BLOCK_X, BLOCK_Y);
    for (int t = 0; t < tmax; t++) {
        fdtd_step<<<grid, block>>>(nx, ny, cur[0], cur[1], cur[2], nxt[0], nxt[1], nxt[2], fict, t);
        for (int a = 0; a < 3; a++) { float *s = cur[a]; cur[a] = nxt[a]; nxt[a] = s; }
    }
    if (cur[0] != ex) {
        cudaMemcpyAsync(ex, cur[0], sz * sizeof(float), cudaMemcpyDeviceToDevice, 0);
        cudaMemcpyAsync(ey, cur[1], sz * sizeof(float), cudaMemcpyDeviceToDevice, 0);
        cudaMemcpyAsync(hz, cur[2], sz * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    }
    cudaFree(tmp);
}
