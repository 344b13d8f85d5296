/* Lesson 10's problem as a harness op (op.h): its tensors in each layout, how they are
 * drawn or read from the seed's .npy files and written back, and the check of a result
 * against the float64 gold (covariance.h). */
#ifndef COVARIANCE_OP_H
#define COVARIANCE_OP_H

#include "covariance.h"
#include "op.h"

/* op_args.tensor[] of every layout, in this order. */
enum cov_tensor { COV_MU, COV_GAMMA, COV_C, COV_OUT, COV_TENSOR_COUNT };

extern const char *const cov_layout_names[]; /* indexed by enum cov_layout */
#define COV_LAYOUT_COUNT 3

int cov_op_tensors(const struct conv_shape *s, int layout, struct op_tensor *t);
/* mu and the diagonal blocks of gamma uniform in [-1, 1), each block symmetric in
 * (p, p') as a covariance is; c in [0, 1); the output before the op uniform in
 * [-1, 1). In the full layouts every entry outside the diagonal blocks is NaN: a
 * kernel that reads one gets a NaN, a kernel that writes one is caught by the check. */
void cov_op_draw(const struct conv_shape *s, int layout, uint64_t seed, void *const *tensor);
/* Every element of the diagonal blocks against its gold while that costs at most
 * COV_CHECK_MAX_TERMS window terms, else the rows q of a sample (every q', every c0, the
 * first and last rows included); and in the full layout every entry outside the blocks
 * still NaN. */
/* .npy files (op.file_sets): the seed's tensors in the full layout, flags named as the seed
 * names them (--mu, --gamma, --c, and --input for the output it adds to), their shapes
 * in these dimensions. The window k is H - Ho + 1 (= W - Wo + 1), odd in
 * 1..MAX_KSIZE as --ksize is. */
enum cov_dim { COV_DIM_B, COV_DIM_CI, COV_DIM_CO, COV_DIM_H, COV_DIM_W, COV_DIM_HO, COV_DIM_WO,
               COV_DIM_COUNT };
extern const char *const cov_dim_names[COV_DIM_COUNT];
extern const struct op_file cov_op_files[COV_TENSOR_COUNT];
bool cov_op_shape_of_files(const size_t *dim, struct conv_shape *s, int *culprit, char *why,
                           size_t why_size);
/* A layout's tensors from the files' values: mu and c as they are, the diagonal blocks
 * of gamma and the output gathered (the full layout's other entries NaN, as drawn);
 * the factored S starts at zero. */
void cov_op_from_files(const struct conv_shape *s, int layout, void *const *file,
                       void *const *tensor);
/* The file's output (file[COV_OUT], the seed's input) after a run in a layout: its
 * diagonal blocks replaced by the run's (plus c (x) S for the factored layout), every
 * other entry as it was. */
void cov_op_to_files(const struct conv_shape *s, int layout, void *const *file,
                     void *const *after);
/* The compact files, by the same flags: what the op reads and the factored output, the
 * tensors of COV_FACTORED byte for byte. --mu (B, Ci, H, W) and --c (Co,) as above,
 * --gamma (B, Ci, H, W, H, W) the diagonal blocks gd, --input (B, Ho, Wo, Ho, Wo) S before
 * the op. They stand for the seed's tensors with the diagonal blocks gd and c[c0]*S (the
 * factored layout's out = c (x) S), which the op makes c (x) (S + its sum). */
extern const struct op_file cov_op_compact_files[COV_TENSOR_COUNT];
/* A layout's tensors from the compact files' values, meaning the same: the factored
 * layout's as they are; the blocks layout's output block c0 = c[c0]*S (rounded to
 * float32); the full layout's the same blocks scattered, gamma's too, every other entry
 * NaN, as drawn. */
void cov_op_from_compact_files(const struct conv_shape *s, int layout, void *const *file,
                               void *const *tensor);
/* The compact files' output (file[COV_OUT], S) after a run in the factored layout, the
 * one layout that holds S itself (cov_op_writes_compact). */
void cov_op_to_compact_files(const struct conv_shape *s, int layout, void *const *file,
                             void *const *after);
bool cov_op_writes_compact(int layout);
/* The op's file sets (op.file_sets): the seed's layout, then the compact one. */
enum cov_file_set { COV_FILES_SEED, COV_FILES_COMPACT, COV_FILE_SET_COUNT };
extern const struct op_file_set cov_file_sets[COV_FILE_SET_COUNT];

struct check_result cov_op_check(const struct conv_shape *s, int layout, void *const *before,
                                 void *const *after);
double cov_op_min_bytes(const struct conv_shape *s, int layout);
double cov_op_flops(const struct conv_shape *s, int layout);

#define COV_CHECK_MAX_TERMS (1.0 * (1 << 28))

#endif
