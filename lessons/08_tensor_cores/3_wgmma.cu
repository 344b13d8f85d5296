/* Lesson 08, variants "wgmma_fp16" and "wgmma_bf16": the implicit GEMM of
 * gemm_tiles.cuh on Hopper's warpgroup MMA (sm_90a only), fed by the Tensor Memory
 * Accelerator (TMA) through a warp-specialised pipeline. Where mma.sync needs every
 * fragment in registers (ldmatrix, 230 registers per thread, 2 warps per scheduler:
 * latency-bound, docs/08_tensor_cores.md), wgmma reads both operands straight from shared
 * memory through 64-bit descriptors, a warpgroup (4 warps) at a time, and runs
 * asynchronously: the warps issue it, go on, and wait for it only when they need the
 * result or its shared memory back.
 *   - A block computes 128 pixels x BN output channels: BN = 256 where the layer has
 *     256 output channels or more, 128 below (there a 256-wide block would multiply
 *     the TMA's zeros past the last channel for much of its width). The 128 pixels are
 *     a BW x BH rectangle of one image (BW the power of two >= W, at most 128; BH =
 *     128 / BW), so that a tile of A is a box of the NHWC input: 64 channels of that
 *     rectangle, moved by the tap (r - R/2, s - S/2).
 *   - k runs tap by tap, 64 channels at a time: a k-step is one tap and 64 channels, a
 *     row of 128 bytes per pixel (A) and per output channel (B). Taps that move the
 *     rectangle wholly off the image would multiply only zeros: the block skips them.
 *   - 3 warpgroups with different jobs (warp specialisation). In warpgroup 0, the
 *     producer, one thread issues the two TMA loads of each k-step: A from a 4-D tensor
 *     map over the input, B from a 3-D one over the weights. Warpgroups 1 and 2, the
 *     consumers, each issue one wgmma.m64n<BN>k16 per 16 values of k for 64 of the
 *     pixels: 64 (BN = 128) or 128 (BN = 256) fp32 accumulators per thread.
 *   - Why the wide tile: per k-step a block loads A (16 KB) and B (BN x 128 bytes), so
 *     BN = 256 does twice the multiplies for 1.5 times the bytes; the fixed costs of a
 *     step (barrier waits, descriptor arithmetic, issuing the wgmmas) buy twice the
 *     tensor work; and half as many blocks pay the pipeline's fill and the epilogue.
 *     It is CUTLASS's default Hopper GEMM tile (128 x 256 x 64, 2 consumer warpgroups).
 *   - A ring of stages, 32 KB (BN = 128) or 48 KB (BN = 256) each, with two mbarriers
 *     per stage: `full` completes when the stage's bytes have landed, `empty` when the
 *     8 consumer warps are done reading it. No __syncthreads in the loop: each side
 *     waits only for the barrier the other side signals, and the loads run up to
 *     stages - 1 steps ahead of the multiplies.
 *   - The TMA writes zeros for what lies outside a tensor, negative coordinates
 *     included: that is the convolution's zero padding, and the zeros past the last
 *     channel, pixel and output channel.
 *   - Its boxes land in the 128-byte swizzle wgmma reads (16-byte chunk c of row r at
 *     c ^ (r % 8)), in stages aligned to 1024 bytes, the swizzle's period.
 * The TMA needs rows of channels that are a multiple of 16 bytes and 16-byte aligned
 * tensors. Where they are not (C not a multiple of 8, as the first U-Net layer's C = 3),
 * the variants run this lesson's first wgmma kernel, conv2d_wgmma_gather: all 256 threads
 * gather 128 x 128 tiles element by element into a 4-stage ring and meet at a barrier
 * per tile. Everything is inlined into the kernels: ptxas serialises wgmma across calls.
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant wgmma_fp16
 */
#include "cuda_check.h"
#include "gemm_tiles.cuh"
#include "grid_chunks.cuh"
#include "kernels.h"
#include "tma_pipeline.cuh"

/* wgmma exists on sm_90a only; elsewhere the variants say so and never launch. */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CONV_HAVE_WGMMA 1
#else
#define CONV_HAVE_WGMMA 0
#endif

/* Both kernels. */
#define WG_BM 128   /* pixels per block: 2 warpgroups of 64 rows */
#define WG_BN 128   /* output channels per block of the gather kernel (the TMA's: BN) */
#define WG_CHUNKS 8 /* 128-byte tile rows: 64 values of k */
#define WG_ROWS_PER_GROUP 64
#define WG_IN_FLIGHT 1       /* committed wgmma groups left running at the end of a tile */
#define WG_KSTEP_BYTES 32    /* k16 of 2-byte values */
#define WG_SWIZZLE_ATOM 1024 /* 8 rows of 128 bytes: the swizzle's period and alignment */
#define WG_TILE_CHUNKS ((WG_BM + WG_BN) * WG_CHUNKS) /* one stage of the gather kernel */

/* The TMA kernel: a producer warpgroup and 2 consumer warpgroups. */
#define TMA_THREADS 384
#define TMA_CONSUMER_WARPS 8
#define TMA_BOX_CHANNELS 64 /* channels per k-step: one 128-byte row */
#define TMA_WIDE_COUT 256   /* layers with this many output channels or more: BN = 256 */

/* The TMA kernel's block tile, 128 pixels x BN output channels. A stage holds A
 * (128 rows of 128 bytes, 16 KB), then B (BN rows: 16 or 32 KB). The consumers hold 2
 * stages (the one their wgmmas read, the one the wgmmas still in flight read), the loads
 * run ahead in the others, and a block has 227 KB of shared memory at most.
 *   BN = 128: 6 stages of 32 KB (193 KB with the alignment slack) keep at least 4 steps
 *     of loads in flight; 7 would fit too (225 KB), 8 would not.
 *   BN = 256: 4 stages of 48 KB (193 KB); 5 would need 241 KB. That leaves 2 steps of
 *     loads in flight, but a step is twice the tensor work of a 128-wide one: the loads
 *     run as far ahead in time as 4 narrow steps do. */
template <int BN> struct tma_tile {
    static_assert(BN == 128 || BN == 256, "wgmma.m64n128k16 or m64n256k16");
    static constexpr int ACCUMULATORS = BN / 2; /* 64 x BN fp32 over 128 threads */
    static constexpr int STAGES = BN == 128 ? 6 : 4;
    static constexpr int CHUNKS = (WG_BM + BN) * WG_CHUNKS; /* 16-byte chunks of a stage */
    static constexpr int STAGE_BYTES = CHUNKS * CHUNK_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + WG_SWIZZLE_ATOM;
    static_assert(SMEM_BYTES + 2 * STAGES * 8 <= 227 * 1024, "the ring fits one SM");
};

/* The gather kernel: 2 warpgroups that all copy, then all multiply. */
#define GATHER_STAGES 4
#define GATHER_AHEAD (GATHER_STAGES - 1 - WG_IN_FLIGHT) /* tiles being loaded ahead */
#define GATHER_THREADS 256
#define GATHER_SMEM_BYTES (GATHER_STAGES * WG_TILE_CHUNKS * CHUNK_BYTES + WG_SWIZZLE_ATOM)

/* A shared-memory operand for wgmma is a 64-bit descriptor (PTX ISA, "Matrix
 * Descriptor Format"); its fields, addresses and offsets in 16-byte units: */
#define DESC_UNIT_BYTES 16
#define DESC_START_SHIFT 0    /* bits 0-13: the tile's shared-memory address */
#define DESC_START_LIMIT (1u << 18) /* 14 bits of 16-byte units: 256 KB */
#define DESC_LEADING_SHIFT 16 /* bits 16-29: the leading dimension's byte offset */
#define DESC_STRIDE_SHIFT 32  /* bits 32-45: from one 8-row group to the next */
#define DESC_SWIZZLE_SHIFT 62 /* bits 62-63: 0 none, 1 128-byte, 2 64-byte, 3 32-byte */
#define DESC_SWIZZLE_128B 1

/* The descriptor of a K-major tile in the 128-byte swizzle: the leading offset is
 * unused (1, as the ISA asks), the stride is one swizzle atom, 8 rows of 128 bytes. */
static __device__ __forceinline__ uint64_t tile_descriptor(const uint4 *tile)
{
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(tile);
    const uint64_t start = address % DESC_START_LIMIT / DESC_UNIT_BYTES;
    const uint64_t leading = 1, stride = WG_SWIZZLE_ATOM / DESC_UNIT_BYTES;
    return start << DESC_START_SHIFT | leading << DESC_LEADING_SHIFT |
           stride << DESC_STRIDE_SHIFT | (uint64_t)DESC_SWIZZLE_128B << DESC_SWIZZLE_SHIFT;
}

/* The same tile `bytes` further along its rows: only the start address moves. */
static __device__ __forceinline__ uint64_t descriptor_plus(uint64_t descriptor, int bytes)
{
    return descriptor + ((uint64_t)(bytes / DESC_UNIT_BYTES) << DESC_START_SHIFT);
}

/* One wgmma.m64n128k16 or m64n256k16 of 16-bit operands `type` (f16 or bf16) from two
 * shared-memory descriptors into 64 or 128 fp32 accumulators d[] per thread, added to
 * what they hold. The asm names each accumulator as an operand: WG_D64(d, i) is
 * d[i..i + 63], and %0.. in the instruction are the operands in order. */
#define WG_D8(d, i)                                                                                \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),    \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define WG_D64(d, i)                                                                               \
    WG_D8(d, i), WG_D8(d, i + 8), WG_D8(d, i + 16), WG_D8(d, i + 24), WG_D8(d, i + 32),            \
        WG_D8(d, i + 40), WG_D8(d, i + 48), WG_D8(d, i + 56)
#define WG_OPERANDS_0_63                                                                           \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                       \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "             \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "             \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_OPERANDS_64_127                                                                         \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "             \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "             \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "                         \
    "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, "                     \
    "%120, %121, %122, %123, %124, %125, %126, %127"
/* The instruction after its accumulators: the descriptors, scale-d (accumulate: a
 * predicate set to true), scale-a and scale-b 1, neither operand transposed. */
#define WG_TAIL(a, b) "%" #a ", %" #b ", accumulate, 1, 1, 0, 0;\n"
#if CONV_HAVE_WGMMA
#define WGMMA_M64N128K16(type, d, desc_a, desc_b)                                                  \
    asm volatile("{\n"                                                                             \
                 ".reg .pred accumulate;\n"                                                        \
                 "setp.ne.b32 accumulate, 1, 0;\n"                                                 \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." type "." type " "                  \
                 "{" WG_OPERANDS_0_63 "}, " WG_TAIL(64, 65) "}\n"                                  \
                 : WG_D64(d, 0)                                                                    \
                 : "l"(desc_a), "l"(desc_b))
#define WGMMA_M64N256K16(type, d, desc_a, desc_b)                                                  \
    asm volatile("{\n"                                                                             \
                 ".reg .pred accumulate;\n"                                                        \
                 "setp.ne.b32 accumulate, 1, 0;\n"                                                 \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." type "." type " "                  \
                 "{" WG_OPERANDS_0_63 ", " WG_OPERANDS_64_127 "}, " WG_TAIL(128, 129) "}\n"        \
                 : WG_D64(d, 0), WG_D64(d, 64)                                                     \
                 : "l"(desc_a), "l"(desc_b))
#else
#define WGMMA_M64N128K16(type, d, desc_a, desc_b) __trap()
#define WGMMA_M64N256K16(type, d, desc_a, desc_b) __trap()
#endif

static __device__ __forceinline__ void wgmma_fence(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

static __device__ __forceinline__ void wgmma_commit(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/* Waits until at most `pending` committed groups of this warpgroup are in flight. */
template <int pending> static __device__ __forceinline__ void wgmma_wait(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
#endif
}

/* The accumulators are written by the tensor cores behind the compiler's back: an
 * empty asm that "reads and writes" each one keeps the compiler from moving an access
 * to them across a fence or a wait (CUTLASS's warpgroup_fence_operand). */
template <int N> static __device__ __forceinline__ void pin_accumulators(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* Makes this thread's shared-memory stores visible to the async proxy that wgmma reads
 * through. */
static __device__ __forceinline__ void fence_async_proxy(void)
{
#if CONV_HAVE_WGMMA
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

/* The wgmma of 128 x BN block tiles: m64n<BN>k16 on the storage type of Op. */
template <typename Op, int BN> struct wgmma_op;
template <> struct wgmma_op<mma_fp16, 128> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t a, uint64_t b)
    {
        WGMMA_M64N128K16("f16", d, a, b);
    }
};
template <> struct wgmma_op<mma_bf16, 128> {
    static __device__ __forceinline__ void run(float (&d)[64], uint64_t a, uint64_t b)
    {
        WGMMA_M64N128K16("bf16", d, a, b);
    }
};
template <> struct wgmma_op<mma_fp16, 256> {
    static __device__ __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b)
    {
        WGMMA_M64N256K16("f16", d, a, b);
    }
};
template <> struct wgmma_op<mma_bf16, 256> {
    static __device__ __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b)
    {
        WGMMA_M64N256K16("bf16", d, a, b);
    }
};

/* Starts one k-step of a warpgroup's tile: 4 wgmma.m64n<BN>k16 along the 64 values of k
 * of a stage, committed as one group that keeps running after this returns. B is BN rows
 * of 128 bytes; its descriptor is the same for both widths: the stride from 8 rows to
 * the next 8 is one swizzle atom, whatever N the instruction reads. */
template <typename Op, int BN>
static __device__ __forceinline__ void multiply_step(float (&acc)[BN / 2], const uint4 *a_tile,
                                                     const uint4 *b_tile)
{
    const uint64_t a_desc = tile_descriptor(a_tile), b_desc = tile_descriptor(b_tile);
    pin_accumulators(acc);
    wgmma_fence();
    /* Along k inside the swizzled rows: 32 bytes further each time. */
#pragma unroll
    for (int k = 0; k < WG_CHUNKS * CHUNK_BYTES / WG_KSTEP_BYTES; k++)
        wgmma_op<Op, BN>::run(acc, descriptor_plus(a_desc, k * WG_KSTEP_BYTES),
                              descriptor_plus(b_desc, k * WG_KSTEP_BYTES));
    wgmma_commit();
}

/* Adds the bias and stores warpgroup `group`'s 64 rows of a 128 x BN tile. The
 * accumulators of m64nNk16 are laid out like mma.m16n8's, whatever N (PTX ISA, "wgmma
 * Register Fragments"), warp w of the warpgroup holding rows 16 w..16 w + 15: for each
 * 8 channels j < N / 8, acc[4j], acc[4j+1] at row lane / 4, channels 2 (lane % 4) and
 * the next, acc[4j+2], acc[4j+3] 8 rows below. pixel_of(row) is the
 * output pixel (n*H + y)*W + x of tile row `row`, or -1 where the tile has none. */
template <int BN, typename Out, typename PixelOf>
static __device__ __forceinline__ void store_tile(const float (&acc)[BN / 2], Out *output,
                                                  const float *bias, int cout, int j0, int group,
                                                  PixelOf pixel_of)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
    int pixel[2];
#pragma unroll
    for (int half = 0; half < 2; half++)
        pixel[half] = pixel_of(group * WG_ROWS_PER_GROUP + warp * 16 + lane / 4 + half * 8);
    const bool pairs = cout % 2 == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int ch = j0 + j * 8 + lane % 4 * 2;
        const float b0 = bias && ch < cout ? bias[ch] : 0.0f;
        const float b1 = bias && ch + 1 < cout ? bias[ch + 1] : 0.0f;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            if (pixel[half] < 0 || ch >= cout)
                continue;
            Out *dst = output + (size_t)pixel[half] * cout + ch;
            const float v0 = acc[4 * j + 2 * half] + b0, v1 = acc[4 * j + 2 * half + 1] + b1;
            store_pair(dst, v0, v1, pairs);
            if (!pairs && ch + 1 < cout)
                store_pair(dst + 1, v1, 0.0f, false);
        }
    }
}

/* Where a TMA block's 128 pixels lie: rectangles of 2^width_log2 x 128 / 2^width_log2
 * pixels, tiles_x across an image and tiles_y down it. */
struct pixel_tiling {
    int width_log2, tiles_x, tiles_y;
};

/* BW = the power of two >= w, at most 128: narrow images waste no columns beyond the
 * power of two, wide ones get rows of 128 pixels. */
static int tile_width_log2(int w)
{
    int log2 = 0;
    while ((1 << log2) < w && (1 << log2) < WG_BM)
        log2++;
    return log2;
}

static struct pixel_tiling pixel_tiling_of(const struct conv_shape *s)
{
    struct pixel_tiling t;
    t.width_log2 = tile_width_log2(s->w);
    t.tiles_x = ceil_div(s->w, 1 << t.width_log2);
    t.tiles_y = ceil_div(s->h, WG_BM >> t.width_log2);
    return t;
}

/* The taps t = 0..ksize-1 along one axis whose moved window of the block's pixels,
 * first + t - radius .. first + t - radius + extent - 1, overlaps 0..size-1: lo..hi. The
 * others would load only the TMA's zeros and multiply them, so neither side spends a
 * k-step on them. The centre tap, the block's own pixels, always overlaps. */
static __device__ __forceinline__ void taps_overlapping(int first, int extent, int size, int ksize,
                                                        int *lo, int *hi)
{
    const int radius = ksize / 2;
    *lo = max(0, radius - first - extent + 1);
    *hi = min(ksize - 1, radius + size - 1 - first);
}

/* The warp-specialised kernel, 128 pixels x BN output channels per block.
 * input_map: the NHWC input as C x W x H x N (innermost first), box 64 x BW x BH x 1.
 * weight_map: the KRSC weights as C x (R*S) x K, box 64 x 1 x BN. Block (x, y): output
 * channels BN x from there, pixel rectangle first_tile + y (the launch walks the
 * rectangles in chunks of MAX_GRID_YZ). */
template <typename Op, int BN>
__global__ void __launch_bounds__(TMA_THREADS, 1)
    conv2d_wgmma_tma(const __grid_constant__ CUtensorMap input_map,
                     const __grid_constant__ CUtensorMap weight_map, const float *__restrict__ bias,
                     typename Op::out *__restrict__ output, struct conv_shape s,
                     struct pixel_tiling tiling, int first_tile)
{
    typedef tma_tile<BN> tile_t;
    constexpr int STAGES = tile_t::STAGES;
    extern __shared__ uint4 smem[];
    /* full[i]: stage i's bytes have landed. empty[i]: the consumers are done with it. */
    __shared__ uint64_t full[STAGES], empty[STAGES];
    /* The swizzle is a function of the address: every stage starts on an atom. */
    uint4 *ring =
        reinterpret_cast<uint4 *>((reinterpret_cast<uintptr_t>(smem) + WG_SWIZZLE_ATOM - 1) &
                                  ~(uintptr_t)(WG_SWIZZLE_ATOM - 1));

    /* This block's rectangle: image n, columns x0.., rows y0..; its channels j0... */
    const int tile = first_tile + blockIdx.y;
    const int tile_x = tile % tiling.tiles_x, tile_y = tile / tiling.tiles_x % tiling.tiles_y;
    const int n = tile / tiling.tiles_x / tiling.tiles_y;
    const int x0 = tile_x << tiling.width_log2, y0 = tile_y * (WG_BM >> tiling.width_log2);
    const int j0 = blockIdx.x * BN;
    const int radius = s.ksize / 2;
    /* Its k-steps: taps r_lo..r_hi x s_lo..s_hi, 64 channels at a time. */
    int r_lo, r_hi, s_lo, s_hi;
    taps_overlapping(y0, WG_BM >> tiling.width_log2, s.h, s.ksize, &r_lo, &r_hi);
    taps_overlapping(x0, 1 << tiling.width_log2, s.w, s.ksize, &s_lo, &s_hi);
    const int steps = (r_hi - r_lo + 1) * (s_hi - s_lo + 1) * ceil_div(s.cin, TMA_BOX_CHANNELS);

    /* Every stage's barriers start in phase 0: full waits for the producer's one arrival
     * (and the bytes it announces), empty for one arrival per consumer warp. */
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            barrier_init(&full[i], 1);
            barrier_init(&empty[i], TMA_CONSUMER_WARPS);
        }
        barrier_init_fence();
    }
    __syncthreads(); /* the last block-wide barrier: from here on, only mbarriers */

    const int warpgroup = threadIdx.x / 128;
    if (warpgroup == 0) {
        /* The producer: one thread walks k, tap (r, s) by tap, 64 channels at a time. Step
         * t fills stage t % STAGES in round t / STAGES of the ring; from the
         * second round on, only once the consumers have emptied the stage in the round
         * before (phase round - 1 of its empty barrier: parity phase ^ 1). The first
         * STAGES steps wait for nothing. */
        if (threadIdx.x == 0) {
            tma_prefetch(&input_map);
            tma_prefetch(&weight_map);
            ring_position<STAGES> at;
            int tap_r = r_lo, tap_s = s_lo, c0 = 0;
            for (int t = 0; t < steps; t++) {
                if (t >= STAGES)
                    barrier_wait(&empty[at.stage], at.phase ^ 1);
                uint4 *a_tile = ring + at.stage * tile_t::CHUNKS;
                uint4 *b_tile = a_tile + WG_BM * WG_CHUNKS;
                /* The full box counts, zeros included. */
                barrier_expect_bytes(&full[at.stage], tile_t::STAGE_BYTES);
                /* A: channels c0.. of the rectangle moved by the tap. B: the same
                 * channels of tap (r, s) for output channels j0... */
                tma_load_4d(a_tile, &input_map, &full[at.stage], c0, x0 + tap_s - radius,
                            y0 + tap_r - radius, n);
                tma_load_3d(b_tile, &weight_map, &full[at.stage], c0, tap_r * s.ksize + tap_s,
                            j0);
                if ((c0 += TMA_BOX_CHANNELS) >= s.cin) {
                    c0 = 0;
                    if (++tap_s > s_hi) {
                        tap_s = s_lo;
                        tap_r++;
                    }
                }
                at.advance();
            }
        }
        return; /* the producer's other threads have nothing to do */
    }

    /* The consumers: warpgroup 1 multiplies pixels 0..63 of the rectangle, 2 the rest. */
    const int group = warpgroup - 1, lane = threadIdx.x % 32;
    float acc[tile_t::ACCUMULATORS] = {};
    int previous = 0;
    ring_position<STAGES> at;
    for (int t = 0; t < steps; t++) {
        /* Step t's bytes: round t / STAGES of full[at.stage] (the producer cannot be a
         * round ahead: it waits for this stage's release, which comes after this). */
        barrier_wait(&full[at.stage], at.phase);
        const uint4 *a_tile =
            ring + at.stage * tile_t::CHUNKS + group * WG_ROWS_PER_GROUP * WG_CHUNKS;
        const uint4 *b_tile = ring + at.stage * tile_t::CHUNKS + WG_BM * WG_CHUNKS;
        multiply_step<Op, BN>(acc, a_tile, b_tile);
        /* Step t's wgmmas keep running; those of step t - 1 have now completed, so each
         * warp gives that stage back (one arrival per warp: a warp's wait covers its
         * own wgmmas). The last stage is never given back: nothing more is loaded. */
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
        if (t > 0 && lane == 0)
            barrier_arrive(&empty[previous]);
        previous = at.stage;
        at.advance();
    }
    wgmma_wait<0>();
    pin_accumulators(acc);

    store_tile<BN>(acc, output, bias, s.cout, j0, group, [&](int row) {
        const int y = y0 + (row >> tiling.width_log2);
        const int x = x0 + (row & ((1 << tiling.width_log2) - 1));
        return y < s.h && x < s.w ? (n * s.h + y) * s.w + x : -1;
    });
}

/* The fallback for channel counts the TMA cannot read: the tile_loader of the mma
 * kernels gathers each element on its own into the same swizzled tiles
 * (tile_chunk<8, true>), by all 256 threads into a 4-stage ring, with plain loads and
 * stores. Stores write through the generic proxy and wgmma reads through the async
 * proxy: a fence.proxy.async between the stores and the barrier. One tile's wgmmas stay
 * in flight while the warps go on: the ring holds the tile being read, the tile in
 * flight, and two being filled. Block y computes pixels
 * (first_tile + y) * 128.. in N*H*W order. */
template <typename Op>
__global__ void __launch_bounds__(GATHER_THREADS, 1)
    conv2d_wgmma_gather(const typename Op::elem *__restrict__ input,
                        const typename Op::elem *__restrict__ weights,
                        const float *__restrict__ bias, typename Op::out *__restrict__ output,
                        struct conv_shape s, int first_tile)
{
    typedef tile_loader<uint16_t, WG_BM, WG_BN, WG_CHUNKS, GATHER_THREADS> loader_t;
    extern __shared__ uint4 smem[];
    uint4 *ring =
        reinterpret_cast<uint4 *>((reinterpret_cast<uintptr_t>(smem) + WG_SWIZZLE_ATOM - 1) &
                                  ~(uintptr_t)(WG_SWIZZLE_ATOM - 1));

    const int group = threadIdx.x / 128;
    const int p0 = (first_tile + blockIdx.y) * WG_BM, j0 = blockIdx.x * WG_BN;
    loader_t load(reinterpret_cast<const uint16_t *>(input),
                  reinterpret_cast<const uint16_t *>(weights), s, p0, j0);
    const int tiles = ceil_div(load.depth, loader_t::BK);

    float acc[64] = {};

    /* One stage is read by the wgmmas still in flight, one by those issued now, and
     * the loads run GATHER_AHEAD tiles ahead into the others. */
    for (int t = 0; t < GATHER_AHEAD; t++) {
        if (t < tiles) {
            load.template load<false, true>(ring + t * WG_TILE_CHUNKS,
                                            ring + t * WG_TILE_CHUNKS + WG_BM * WG_CHUNKS);
            load.template advance<false>();
        }
    }

    for (int t = 0; t < tiles; t++) {
        fence_async_proxy();
        /* Tile t is stored for everyone; everyone's wgmmas on tile t - 2 have completed
         * (wgmma_wait<WG_IN_FLIGHT> below), so its stage can be refilled. */
        __syncthreads();
        const int fill = t + GATHER_AHEAD;
        if (fill < tiles) {
            uint4 *stage = ring + fill % GATHER_STAGES * WG_TILE_CHUNKS;
            load.template load<false, true>(stage, stage + WG_BM * WG_CHUNKS);
            load.template advance<false>();
        }

        const uint4 *a_tile =
            ring + t % GATHER_STAGES * WG_TILE_CHUNKS + group * WG_ROWS_PER_GROUP * WG_CHUNKS;
        const uint4 *b_tile = ring + t % GATHER_STAGES * WG_TILE_CHUNKS + WG_BM * WG_CHUNKS;
        multiply_step<Op, WG_BN>(acc, a_tile, b_tile);
        /* Tile t's wgmmas keep running while the warps go on to the barrier of tile
         * t + 1 and load tile t + 3. */
        wgmma_wait<WG_IN_FLIGHT>();
        pin_accumulators(acc);
    }
    wgmma_wait<0>();
    pin_accumulators(acc);

    const int pixels = s.n * s.h * s.w;
    store_tile<WG_BN>(acc, output, bias, s.cout, j0, group,
                      [&](int row) { return p0 + row < pixels ? p0 + row : -1; });
}

static CUtensorMapDataType tensor_map_type(const __half *)
{
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

static CUtensorMapDataType tensor_map_type(const __nv_bfloat16 *)
{
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

template <typename Op, int BN> static void launch_tma(const struct conv_args *a)
{
    typedef tma_tile<BN> tile_t;
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input);
    const struct pixel_tiling tiling = pixel_tiling_of(s);
    const cuuint64_t c = (cuuint64_t)s->cin, taps = (cuuint64_t)s->ksize * s->ksize;
    const cuuint64_t row = c * sizeof(E); /* bytes of one pixel's (or tap's) channels */

    /* Encoded at every launch: the maps hold the tensors' addresses, and the harness
     * rotates its buffers between runs. A few microseconds of host work. */
    CUtensorMap input_map, weight_map;
    const cuuint64_t input_dims[4] = {c, (cuuint64_t)s->w, (cuuint64_t)s->h, (cuuint64_t)s->n};
    const cuuint64_t input_strides[3] = {row, row * s->w, row * s->w * s->h};
    const cuuint32_t input_box[4] = {TMA_BOX_CHANNELS, 1u << tiling.width_log2,
                                     (cuuint32_t)WG_BM >> tiling.width_log2, 1};
    encode_tensor_map(&input_map, tensor_map_type(input), 4, a->input, input_dims, input_strides,
                      input_box, "input");
    const cuuint64_t weight_dims[3] = {c, taps, (cuuint64_t)s->cout};
    const cuuint64_t weight_strides[2] = {row, row * taps};
    const cuuint32_t weight_box[3] = {TMA_BOX_CHANNELS, 1, BN}; /* box sizes: 256 at most */
    encode_tensor_map(&weight_map, tensor_map_type(input), 3, a->weights, weight_dims,
                      weight_strides, weight_box, "weights");

    auto kernel = conv2d_wgmma_tma<Op, BN>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    tile_t::SMEM_BYTES));
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    const int pixel_tiles = s->n * tiling.tiles_y * tiling.tiles_x;
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, TMA_THREADS, tile_t::SMEM_BYTES, a->stream>>>(input_map, weight_map, a->bias,
                                                                     output, *s, tiling, first);
        CUDA_CHECK_LAUNCH();
    }
}

template <typename Op> static void launch_gather(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    typedef typename Op::elem E;
    const E *input = static_cast<const E *>(a->input),
            *weights = static_cast<const E *>(a->weights);
    typename Op::out *output = static_cast<typename Op::out *>(a->output);
    auto kernel = conv2d_wgmma_gather<Op>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    GATHER_SMEM_BYTES));
    const int pixel_tiles = ceil_div(s->n * s->h * s->w, WG_BM);
    for (int first = 0; first < pixel_tiles; first += MAX_GRID_YZ) {
        const dim3 grid(ceil_div(s->cout, WG_BN), min(pixel_tiles - first, MAX_GRID_YZ));
        kernel<<<grid, GATHER_THREADS, GATHER_SMEM_BYTES, a->stream>>>(input, weights, a->bias,
                                                                       output, *s, first);
        CUDA_CHECK_LAUNCH();
    }
}

/* The TMA reads rows of channels that are whole 16-byte chunks from 16-byte aligned
 * tensors: exactly what makes the mma kernels' chunks vectors. Its block tile is 256
 * output channels wide from TMA_WIDE_COUT channels on, 128 below. */
template <typename Op> static void launch(const struct conv_args *a)
{
    if (!chunks_are_vectors(&a->shape, sizeof(typename Op::elem), a->input, a->weights))
        launch_gather<Op>(a);
    else if (a->shape.cout >= TMA_WIDE_COUT)
        launch_tma<Op, 256>(a);
    else
        launch_tma<Op, 128>(a);
}

extern "C" int wgmma_code_cc(void)
{
#ifdef CONV_WGMMA_BUILT
    return 90;
#else
    return 0;
#endif
}

extern "C" void launch_conv2d_wgmma_fp16(const struct conv_args *a)
{
    launch<mma_fp16>(a);
}

extern "C" void launch_conv2d_wgmma_bf16(const struct conv_args *a)
{
    launch<mma_bf16>(a);
}
