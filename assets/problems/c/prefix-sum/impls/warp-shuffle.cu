// Reduce-then-scan: pass 1 reduces every tile to one total, the totals are scanned
// recursively, pass 2 rescans each tile with warp shuffles and adds its offset. Each
// warp owns 32 * ITEMS consecutive elements kept in registers. 3 passes over the data.
#define BLOCK_SIZE 256
#define ITEMS 8
#define WARPS (BLOCK_SIZE / 32)
#define TILE (BLOCK_SIZE * ITEMS)
#define FULL 0xffffffffu

__device__ __forceinline__ int warp_inclusive_scan(int v)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        int u = __shfl_up_sync(FULL, v, d);
        if (lane >= d)
            v += u;
    }
    return v;
}

__device__ __forceinline__ int warp_sum(int v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(FULL, v, d);
    return v;
}

__global__ void tile_sums(long long n, const int *__restrict__ in, int *__restrict__ sums)
{
    __shared__ int ws[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long base = (long long)blockIdx.x * TILE;
    int acc = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        long long g = base + k * BLOCK_SIZE + threadIdx.x;
        if (g < n)
            acc += __ldg(in + g);
    }
    acc = warp_sum(acc);
    if (lane == 0)
        ws[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        int v = warp_sum(lane < WARPS ? ws[lane] : 0);
        if (lane == 0)
            sums[blockIdx.x] = v;
    }
}

// in == out is allowed: a warp holds its whole segment in registers before writing.
// offsets: inclusive scan of the tile totals (block b adds offsets[b - 1]), or null.
__global__ void scan_tiles(long long n, const int *in, int *out, const int *offsets)
{
    __shared__ int ws[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long seg = (long long)blockIdx.x * TILE + (long long)warp * 32 * ITEMS;
    int v[ITEMS];
    int carry = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        long long g = seg + k * 32 + lane;
        int x = g < n ? in[g] : 0;
        x = warp_inclusive_scan(x) + carry;
        v[k] = x;
        carry = __shfl_sync(FULL, x, 31);
    }
    if (lane == 31)
        ws[warp] = carry;
    __syncthreads();
    if (warp == 0) {
        int t = lane < WARPS ? ws[lane] : 0;
        int incl = warp_inclusive_scan(t);
        if (lane < WARPS)
            ws[lane] = incl - t;
    }
    __syncthreads();
    const int off = ws[warp] + (offsets && blockIdx.x > 0 ? offsets[blockIdx.x - 1] : 0);
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        long long g = seg + k * 32 + lane;
        if (g < n)
            out[g] = v[k] + off;
    }
}

static void scan_level(long long n, const int *in, int *out, int *scratch)
{
    long long nb = (n + TILE - 1) / TILE;
    if (nb == 1) {
        scan_tiles<<<1, BLOCK_SIZE>>>(n, in, out, (const int *)0);
        return;
    }
    tile_sums<<<(unsigned)nb, BLOCK_SIZE>>>(n, in, scratch);
    scan_level(nb, scratch, scratch, scratch + nb);
    scan_tiles<<<(unsigned)nb, BLOCK_SIZE>>>(n, in, out, scratch);
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
