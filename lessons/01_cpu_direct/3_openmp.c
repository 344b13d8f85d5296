/* conv_reordered on every core. The work is cut into blocks of output rows, and
 * the parallel loop runs over (image, row block, output channel) together, so a
 * single-plane problem still has many blocks to share out (seed000 125, big3 1024),
 * while a U-Net layer keeps neighbouring threads on the same input rows, which
 * stay in the shared cache while each thread makes a different output channel. */
#include "kernels.h"

/* Small enough that a 1000-row image gives every one of 16+ threads several
 * blocks; large enough that a block is many microseconds of work. */
#define ROWS_PER_BLOCK 8

void conv_openmp(const struct conv_args *a)
{
    const struct conv_shape *s = &a->shape;
    const int blocks = (s->h + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;

    /* dynamic: border blocks and the last partial block cost less than the others. */
    /* [page: openmp] */
#pragma omp parallel for collapse(3) schedule(dynamic)
    for (int n = 0; n < s->n; n++)
        for (int b = 0; b < blocks; b++)
            for (int k = 0; k < s->cout; k++) {
                const int y0 = b * ROWS_PER_BLOCK;
                const int y1 = y0 + ROWS_PER_BLOCK < s->h ? y0 + ROWS_PER_BLOCK : s->h;
                conv_rows(a, n, k, y0, y1);
            }
    /* [/page: openmp] */
}
