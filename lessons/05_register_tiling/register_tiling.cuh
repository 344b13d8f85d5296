/* What lesson 05's steps share: the block shape, the filter in __constant__ memory,
 * the 16-byte alignment test and the strip height of the strip and ring kernels. */
#ifndef LESSON05_REGISTER_TILING_CUH
#define LESSON05_REGISTER_TILING_CUH

#include <stdint.h>

#include "constant_bias.cuh"
#include "conv_args.h"
#include "conv_problem.h"
#include "cuda_check.h"
#include "grid_chunks.cuh"
#include "row_span.cuh"
#include "unrolled_radius.cuh"

/* A warp covers one row: 32 threads side by side, each with its own outputs. */
#define BLOCK_W 32
#define BLOCK_H 4
#define BLOCK_THREADS (BLOCK_W * BLOCK_H)
/* Outputs per thread along a row in row8, row8_vec4, strip and the ring8 variants. */
#define WIDE_OUTS 8
/* Tallest strip of output rows per thread in the strip variants. */
#define MAX_STRIP_ROWS 32
/* Blocks per SM below which strips get shorter: with 3 to 5 blocks resident per SM
 * that is 3 or more waves of blocks, so the last, partial wave costs little. */
#define MIN_BLOCKS_PER_SM 16

/* 31 x 31 floats = 3844 bytes of the 64 KB constant bank, whatever ksize is. A
 * __constant__ variable belongs to the .cu file that defines it (the kernels are not
 * relocatable device code), so each step file has its own copy, and its setup fills it. */
static __constant__ float filter_taps[MAX_KSIZE * MAX_KSIZE];
static __constant__ float filter_bias;

/* The device-resident weights and bias into this file's filter_taps and filter_bias. */
static inline void upload_filter(const struct conv_args *a)
{
    const size_t bytes = (size_t)a->shape.ksize * a->shape.ksize * sizeof(float);
    CUDA_CHECK(cudaMemcpyToSymbol(filter_taps, weights_f32(a), bytes, 0, cudaMemcpyDeviceToDevice));
    copy_bias_to_constant(filter_bias, a->bias);
}

/* Filters larger than 15x15, in every variant (any_radius.cu): its own copy of the
 * filter, then the kernel. */
void setup_any_radius(const struct conv_args *a);
void launch_any_radius(const struct conv_args *a);

/* Variant::launch<R> with R the filter's radius (common/device/unrolled_radius.cuh),
 * conv2d_any_radius past the unrolled radii. */
template <typename Variant> void launch_for_filter(const struct conv_args *a)
{
    launch_for_radius<Variant>(a->shape.ksize / 2, a, launch_any_radius);
}

/* 16-byte loads need every row to start on 16 bytes: a width that is a multiple of
 * 4 floats and buffers that start on 16 bytes (cudaMalloc's do, a view into the middle
 * of one may not). Otherwise the same kernel runs with scalar loads. */
static inline bool rows_are_16_byte_aligned(const struct conv_args *a)
{
    return a->shape.w % VEC == 0 && (uintptr_t)input_f32(a) % (VEC * sizeof(float)) == 0 &&
           (uintptr_t)output_f32(a) % (VEC * sizeof(float)) == 0;
}

static inline int sm_count(void)
{
    static int count;
    if (count == 0) {
        int device;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    }
    return count;
}

/* The tallest strip (the fewest halo rows loaded twice) that still gives every SM
 * MIN_BLOCKS_PER_SM blocks, so the last, partly filled wave of blocks is short; a
 * block holds block_strips strips one above the other. */
static inline int strip_rows_for(const struct conv_shape *s, int tiles_x, int block_strips)
{
    const double planes = grid_planes(s->n);
    int rows = MAX_STRIP_ROWS;
    while (rows > 1 && (double)tiles_x * ceil_div(s->h, block_strips * rows) * planes <
                           (double)sm_count() * MIN_BLOCKS_PER_SM)
        rows /= 2;
    return rows;
}

/* How a launcher picks the strip height: always MAX_STRIP_ROWS (strip32), by
 * strip_rows_for, or (the ring kernels) one wave of resident blocks. */
enum strip_height { FIXED_ROWS, FILL_SMS, ONE_WAVE };

#endif
