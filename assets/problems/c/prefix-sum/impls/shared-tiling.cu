// Scan-then-propagate: each block scans a tile of BLOCK_SIZE * ITEMS elements in shared
// memory (sequential per thread, then a scan of the thread totals) and records the tile
// total; the totals are scanned recursively and added back. O(n) work, 4 passes.
#define BLOCK_SIZE 256
#define ITEMS 8
#define TILE (BLOCK_SIZE * ITEMS)
#define PAD(i) ((i) + ((i) >> 5))   // one skew word per 32 keeps the per-thread walk conflict-free

// in == out is allowed: a block reads its whole tile before writing it
__global__ void scan_tiles(long long n, const int *in, int *out, int *sums)
{
    __shared__ int s[PAD(TILE)];
    __shared__ int buf[2][BLOCK_SIZE];
    const long long base = (long long)blockIdx.x * TILE;
    for (int k = 0; k < ITEMS; k++) {
        int i = k * BLOCK_SIZE + threadIdx.x;
        s[PAD(i)] = base + i < n ? in[base + i] : 0;
    }
    __syncthreads();
    const int t0 = threadIdx.x * ITEMS;
    int acc = 0;
    for (int k = 0; k < ITEMS; k++) {
        acc += s[PAD(t0 + k)];
        s[PAD(t0 + k)] = acc;
    }
    int p = 0;
    buf[0][threadIdx.x] = acc;
    __syncthreads();
    for (int off = 1; off < BLOCK_SIZE; off <<= 1) {
        int v = buf[p][threadIdx.x];
        if (threadIdx.x >= off)
            v += buf[p][threadIdx.x - off];
        p ^= 1;
        buf[p][threadIdx.x] = v;
        __syncthreads();
    }
    const int incl = buf[p][threadIdx.x];
    for (int k = 0; k < ITEMS; k++)
        s[PAD(t0 + k)] += incl - acc;
    __syncthreads();
    for (int k = 0; k < ITEMS; k++) {
        int i = k * BLOCK_SIZE + threadIdx.x;
        if (base + i < n)
            out[base + i] = s[PAD(i)];
    }
    if (sums && threadIdx.x == BLOCK_SIZE - 1)
        sums[blockIdx.x] = incl;
}

__global__ void add_offsets(long long n, int *out, const int *sums)
{
    if (blockIdx.x == 0) return;
    const int off = sums[blockIdx.x - 1];
    const long long base = (long long)blockIdx.x * TILE;
    for (int k = 0; k < ITEMS; k++) {
        long long g = base + k * BLOCK_SIZE + threadIdx.x;
        if (g < n)
            out[g] += off;
    }
}

static void scan_level(long long n, const int *in, int *out, int *scratch)
{
    long long nb = (n + TILE - 1) / TILE;
    if (nb == 1) {
        scan_tiles<<<1, BLOCK_SIZE>>>(n, in, out, (int *)0);
        return;
    }
    scan_tiles<<<(unsigned)nb, BLOCK_SIZE>>>(n, in, out, scratch);
    scan_level(nb, scratch, scratch, scratch + nb);
    add_offsets<<<(unsigned)nb, BLOCK_SIZE>>>(n, out, scratch);
}

extern "C" void kernel_prefix_sum(int n, const int *in, int *out)
{
    if (n <= 0) return;
    long long total = 0;
    for (long long m = n; m > TILE; ) {
        m = (m + TILE - 1) / TILE;
        total += m;
    }
    int *scratch = 0;
    if (total)
        cudaMalloc(&scratch, total * sizeof(int));
    scan_level(n, in, out, scratch);
    if (scratch)
        cudaFree(scratch);
}
