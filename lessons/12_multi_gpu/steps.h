/* The lesson's steps, one file each: what each variant runs (and rows_overlap's own
 * setup and teardown, for the slots of its edge bands). */
#ifndef STEPS_H
#define STEPS_H

#include "cuda_check.h"
#include "split.h"

conv_launcher run_batch_split;                                             /* 1_batch_split.c */
conv_launcher run_rows_blocking;                                           /* 2_rows_blocking.c */
conv_launcher setup_rows_overlap, run_rows_overlap, teardown_rows_overlap; /* 3_rows_overlap.c */
conv_launcher run_peer_copy;                                               /* 4_peer_copy.c */

#endif
