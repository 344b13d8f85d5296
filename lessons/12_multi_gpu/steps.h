/* The lesson's steps, one file each: what each variant runs (and rows_overlap's own
 * setup and teardown, for the slots of its edge bands). */
#ifndef STEPS_H
#define STEPS_H

#include "cuda_check.h"
#include "split.h"

void run_batch_split(const struct conv_args *a);
void run_rows_blocking(const struct conv_args *a);
void setup_rows_overlap(const struct conv_args *a);
void run_rows_overlap(const struct conv_args *a);
void teardown_rows_overlap(const struct conv_args *a);
void run_peer_copy(const struct conv_args *a);

#endif
