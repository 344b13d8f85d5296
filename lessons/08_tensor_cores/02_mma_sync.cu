/* Lesson 08, step 2, variant "mma_fp16_tiles": the implicit GEMM of gemm_tiles.cuh on
 * the warp-level instruction the libraries use below Hopper, mma.sync.m16n8k16, with
 * the fragments in our hands (mma_ops.cuh), so that a warp can hold a large tile:
 *   - a block computes 128 pixels x 128 channels (256 x 64 for layers of at most 64
 *     output channels), each of its 4 warps 64 x 64 of them: 4 x 8 mma tiles, 128 fp32
 *     accumulators per thread. A k-step loads 4 fragments of A and 8 of B and feeds
 *     them to 32 mma: each fragment loaded feeds 4 or 8 mma, where wmma's 32 x 32 warp
 *     tiles fed 2;
 *   - each lane reads the words of its fragments itself, one 32-bit load per register,
 *     at the places the PTX ISA gives ("Matrix Fragments for mma.m16n8k16"): lane l
 *     holds rows l / 4 and l / 4 + 8 of A, words l % 4 and l % 4 + 4 of the k-step's
 *     32 bytes; B^T the same with row l / 4. The same bytes serve TF32's m16n8k8.
 * What it keeps from wmma_fp16: unswizzled tiles, one at a time (mma_sync.cuh's
 * conv2d_one_tile).
 *
 *   build/bin/08_tensor_cores --preset unet-256x256 --variant mma_fp16_tiles
 */
#include "kernels.h"
#include "mma_sync.cuh"

/* Fragments read word by word from row-major tiles. The 8 rows a load reads (lanes
 * with the same l % 4) are 64 bytes apart: rows 2 apart share banks, a 4-way conflict. */
struct lane_fragments {
    static constexpr bool SWIZZLED = false;

    template <int CHUNKS, int MT, int NT>
    static __device__ __forceinline__ void load(uint32_t (&a)[MT][4], uint32_t (&b)[NT][2],
                                                const uint4 *a_tile, const uint4 *b_tile, int wm,
                                                int wn, int step)
    {
        constexpr int ROW_WORDS = CHUNKS * CHUNK_BYTES / 4;
        const uint32_t *a_words = reinterpret_cast<const uint32_t *>(a_tile);
        const uint32_t *b_words = reinterpret_cast<const uint32_t *>(b_tile);
        /* [page: lane-words] */
        const int lane = threadIdx.x % 32;
        const int word = step * KSTEP_CHUNKS * CHUNK_BYTES / 4 + lane % 4;
#pragma unroll
        for (int i = 0; i < MT; i++) {
            const uint32_t *row = a_words + (wm + i * 16 + lane / 4) * ROW_WORDS + word;
            a[i][0] = row[0];
            a[i][1] = row[8 * ROW_WORDS];
            a[i][2] = row[4];
            a[i][3] = row[8 * ROW_WORDS + 4];
        }
        /* [/page: lane-words] */
#pragma unroll
        for (int j = 0; j < NT; j++) {
            const uint32_t *row = b_words + (wn + j * 8 + lane / 4) * ROW_WORDS + word;
            b[j][0] = row[0];
            b[j][1] = row[4];
        }
    }
};

extern "C" void launch_conv2d_mma_fp16_tiles(const struct conv_args *a)
{
    launch_one_tile<lane_fragments>(a);
}
