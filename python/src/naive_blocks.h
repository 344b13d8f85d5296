/* Lesson 02's naive kernel at two of its block shapes, as its variant table runs it:
 * 16x16 blocks (seed 000's naive kernel) and 32x8 (a warp per 128-byte row). */
#ifndef NAIVE_BLOCKS_H
#define NAIVE_BLOCKS_H

#include "conv_args.h"

void run_naive_block16x16(const struct conv_args *a);
void run_naive_block32x8(const struct conv_args *a);

#endif
