/* Lesson 09, variant "bmma_rows": bmma_classes with a stage of 3 taps of one filter row
 * (BMMA_ROWS, bmma_tile.cuh). In NHWC the inputs that taps (di, dj0), (di, dj0 + 1) and
 * (di, dj0 + 2) read for the block's 128 consecutive pixels are 130 consecutive pixel
 * rows, so a stage copies those 130 rows once, where bmma_classes copied 128 per tap,
 * and the 3 x 64 weight rows; tap dj0 + d reads A rows d ... d + 127 of it: ldmatrix
 * takes one address per lane, so the shift costs nothing. Per filter row of a 3x3
 * filter on C = 256: one stage, one barrier and 2 of 3 L2 round trips saved; bytes from
 * L2 per block about 31 KB where there were 55. The ring's buffers grow from 192 rows
 * of 48 bytes to 322 (three of them, 46 KB a block, still 3 blocks per SM).
 *
 *   build/bin/09_binary --preset bnn-b16c256s28 --variant bmma_rows
 */
#include "bmma_tile.cuh"
#include "kernels.h"

extern "C" void launch_conv2d_bmma_rows(const struct conv_args *a)
{
    launch_bmma<bmma_and, fp32_values, BMMA_ROWS>(a);
}
