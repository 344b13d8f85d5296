/* Lesson 10's problem: the covariance of a convolution's output under weight noise
 * (seed 001).
 *
 *   out[b,c0,i0,j0,c0,i0',j0'] += c[c0] * sum_{ci,di,dj} ( mu[b,ci,i0+di,j0+dj] * mu[b,ci,i0'+di,j0'+dj]
 *                                        + gamma[b,ci,i0+di,j0+dj,ci,i0'+di,j0'+dj] )
 *
 * The shape is a struct conv_shape read as: n = B (batch), cin = Ci, cout = Co, h x w the
 * input image, ksize = k the window ("valid": Ho = h-k+1, Wo = w-k+1, any k >= 1 up to
 * the image); bias is unused. Positions are flattened row-major: an input position
 * p = i*w + j (P = h*w of them), an output position q = i0*Wo + j0 (Q = Ho*Wo).
 *
 * Layouts (float32, C order):
 *   mu                 B x Ci x P
 *   c                  Co
 *   gamma, full        B x Ci x P x Ci x P      (the seed's 7-D tensor)
 *   gamma, diagonal    B x Ci x P x P           gd[b][ci][p][p'] = gamma[b,ci,p,ci,p']
 *   out, full          B x Co x Q x Co x Q      (the seed's `input`)
 *   out, blocks        B x Co x Q x Q           ob[b][c0][q][q'] = out[b,c0,q,c0,q']
 *   out, factored      B x Q x Q                s[b][q][q']: the sum S, the same for every c0;
 *                                               the op adds c[c0]*S to block c0, so this
 *                                               layout stands for out = before + c (x) s
 * Only the channel-diagonal blocks of gamma and out are ever read or written: the full
 * layouts hold Ci (gamma) and Co (out) times more than the op touches.
 *
 * The kernels see the shapes and layouts; the rest is the op the harness runs (op.h):
 * its tensors in each layout, how they are drawn or read from the seed's .npy files and
 * written back, and the check of a result against the float64 gold. */
#ifndef PROBLEM_H
#define PROBLEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conv_problem.h"
#ifndef __CUDACC__ /* the op's side: the kernels see only the layouts */
#include "op.h"
#endif

#ifdef __CUDACC__
#define COV_HD __host__ __device__
#else
#define COV_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The output layouts above; gamma is full with COV_FULL and diagonal otherwise. */
enum cov_layout { COV_FULL, COV_BLOCKS, COV_FACTORED };

/* The lesson's presets:
 *   cov-toy       B=2 Ci=3  Co=3  9x9   k=3  the seed's toy example
 *   cov-b8c16s16  B=8 Ci=16 Co=16 16x16 k=3  full layout 0.85 GB, compact 53 MB
 *   cov-b4c32s18  B=4 Ci=32 Co=32 18x18 k=3  full layout 2.8 GB, compact 87 MB */
#define COV_PRESET_COUNT 3
extern const struct conv_preset cov_presets[COV_PRESET_COUNT];

static inline COV_HD int cov_out_h(const struct conv_shape *s)
{
    return s->h - s->ksize + 1;
}
static inline COV_HD int cov_out_w(const struct conv_shape *s)
{
    return s->w - s->ksize + 1;
}
static inline COV_HD size_t cov_in_positions(const struct conv_shape *s) /* P */
{
    return (size_t)s->h * s->w;
}
static inline COV_HD size_t cov_out_positions(const struct conv_shape *s) /* Q */
{
    return (size_t)cov_out_h(s) * cov_out_w(s);
}

/* Index helpers, 64-bit: the full layouts pass 2^31 elements at realistic sizes. */
static inline COV_HD size_t cov_mu_at(const struct conv_shape *s, int b, int ci, size_t p)
{
    return ((size_t)b * s->cin + ci) * cov_in_positions(s) + p;
}
static inline COV_HD size_t cov_gamma_full_at(const struct conv_shape *s, int b, int ci, size_t p,
                                              int ci2, size_t p2)
{
    const size_t P = cov_in_positions(s);
    return ((((size_t)b * s->cin + ci) * P + p) * s->cin + ci2) * P + p2;
}
static inline COV_HD size_t cov_gamma_diag_at(const struct conv_shape *s, int b, int ci, size_t p,
                                              size_t p2)
{
    const size_t P = cov_in_positions(s);
    return (((size_t)b * s->cin + ci) * P + p) * P + p2;
}
static inline COV_HD size_t cov_out_full_at(const struct conv_shape *s, int b, int c0, size_t q,
                                            int c02, size_t q2)
{
    const size_t Q = cov_out_positions(s);
    return ((((size_t)b * s->cout + c0) * Q + q) * s->cout + c02) * Q + q2;
}
static inline COV_HD size_t cov_out_blocks_at(const struct conv_shape *s, int b, int c0, size_t q,
                                              size_t q2)
{
    const size_t Q = cov_out_positions(s);
    return (((size_t)b * s->cout + c0) * Q + q) * Q + q2;
}
static inline COV_HD size_t cov_out_factored_at(const struct conv_shape *s, int b, size_t q,
                                                size_t q2)
{
    const size_t Q = cov_out_positions(s);
    return ((size_t)b * Q + q) * Q + q2;
}

/* Element counts. */
size_t cov_mu_count(const struct conv_shape *s);          /* B*Ci*P */
size_t cov_c_count(const struct conv_shape *s);           /* Co */
size_t cov_gamma_full_count(const struct conv_shape *s); /* B*Ci*P*Ci*P */
size_t cov_gamma_diag_count(const struct conv_shape *s); /* B*Ci*P*P */
size_t cov_out_count(const struct conv_shape *s, enum cov_layout l);
/* full B*Co*Q*Co*Q, blocks B*Co*Q*Q, factored B*Q*Q */

/* NULL when the op is defined for this shape, else why not (k larger than the image,
 * a non-positive size, a tensor past SIZE_MAX bytes). */
const char *cov_shape_problem(const struct conv_shape *s);

/* Minimum DRAM traffic in bytes at float32 for a variant writing layout l: the
 * diagonal blocks of gamma read once (the upper triangle p <= p' only when
 * symmetric_gamma: a variant that uses gamma's symmetry), mu read once, and the output
 * read and written once each (the op adds in place): B*Co*Q^2 blocks, plus c, for
 * COV_FULL and COV_BLOCKS (the full layout's diagonal blocks are rows of P and Q
 * contiguous floats, so touching them costs no more than the compact copy), B*Q^2 for
 * COV_FACTORED (c is not needed). */
double cov_min_bytes(const struct conv_shape *s, enum cov_layout l, bool symmetric_gamma);
/* The op's arithmetic as written: per (b, q, q') Ci*k^2 terms of 3 FLOPs (multiply,
 * add gamma, accumulate); for COV_FULL and COV_BLOCKS 2 more per output block
 * (multiply by c[c0], add in place), for COV_FACTORED 1 (add in place). */
double cov_flops(const struct conv_shape *s, enum cov_layout l);

/* Layout conversion (host, untimed setup). Gather copies the diagonal blocks out of a
 * full tensor; scatter writes them back and leaves every off-diagonal entry as it was. */
void cov_gather_gamma(const struct conv_shape *s, const float *gamma_full, float *gamma_diag);
void cov_scatter_gamma(const struct conv_shape *s, const float *gamma_diag, float *gamma_full);
void cov_gather_out(const struct conv_shape *s, const float *out_full, float *out_blocks);
void cov_scatter_out(const struct conv_shape *s, const float *out_blocks, float *out_full);
/* Copies the upper triangle p <= p' of every diagonal block onto the lower one, so
 * gamma is what the op's inputs are: a covariance, symmetric in (p, p'). */
void cov_symmetrize_gamma(const struct conv_shape *s, float *gamma_diag);

/* Whether gamma's diagonal blocks are symmetric in (p, p'), as a covariance is: the
 * variants factored_symmetric and channels_summed_symmetric read one triangle of each
 * block and mirror it, and on any other gamma compute something else. A pair counts as
 * symmetric to float32 rounding, |a - b| <= 2 FLT_EPSILON max(|a|, |b|) (a covariance
 * computed in float32 may be a rounding off symmetric; the mirrored results then stay
 * well inside the check's tolerance). The first pair that is not, p < p' in the blocks'
 * order, is named in the layout it came from: rank 7 the seed's 7-D gamma
 * [b, ci, i, j, ci, i', j'], rank 6 the diagonal blocks [b, ci, i, j, i', j']. */
struct cov_asymmetry {
    bool found;
    int rank;                   /* of the indices below: 7 or 6 */
    size_t b, ci, i, j, i2, j2; /* the element gamma(p = (i, j), p' = (i2, j2)) */
    float value, mirror;        /* gamma(p, p') and gamma(p', p) */
};
bool cov_pair_symmetric(float a, float b);
/* The first asymmetric pair of the diagonal blocks gd (rank 6). */
struct cov_asymmetry cov_find_asymmetry(const struct conv_shape *s, const float *gamma_diag);
/* The same of a --gamma file in either file set (7 dimensions, the seed's layout, or 6,
 * the compact one), reading only its diagonal blocks, one block at a time. false when
 * the file is not one the op's files could hold (not a strict float32 .npy, another
 * rank, blocks that are not square): op_files_read names what is wrong. */
bool cov_gamma_file_asymmetry(const char *path, struct cov_asymmetry *a);
/* The run's record, made before any work (the lesson's prepare): the --gamma file's
 * asymmetry, or path NULL for a drawn gamma (symmetric by construction). */
void cov_note_gamma(const char *path, const struct cov_asymmetry *a);
/* The symmetric variants' op_variant.unsupported: NULL for a symmetric gamma, else why
 * they cannot run, naming the file and the first pair that is not symmetric. */
const char *cov_needs_symmetric_gamma(const struct conv_shape *s);

/* The seed's op_slow, loop for loop, on the full layouts (1_cpu_loops.c): `out` is the
 * seed's `input`, updated in place, each term rounded into it in float32. */
void cov_op_slow(const struct conv_shape *s, float *out_full, const float *gamma_full,
                 const float *mu, const float *c);
/* The same loops with OpenMP over (b, c0, i0): every output sums its terms in the
 * same order, so the result is bit-identical to cov_op_slow. */
void cov_op_slow_openmp(const struct conv_shape *s, float *out_full, const float *gamma_full,
                        const float *mu, const float *c);

/* The float64 references (gamma in the diagonal layout). cov_sum_at is
 * S(b,q,q') = sum_{ci,di,dj} mu*mu' + gd; *magnitude (if not NULL) receives
 * sum |mu*mu'| + |gd|, the scale of its rounding error. */
double cov_sum_at(const struct conv_shape *s, const float *mu, const float *gamma_diag, int b,
                  size_t q, size_t q2, double *magnitude);
/* One element of the blocks output after the op: out_before[b][c0][q][q'] + c[c0]*S
 * (out_before in the blocks layout). *magnitude: |out_before| + |c[c0]| * S's magnitude. */
double cov_gold_at(const struct conv_shape *s, const float *mu, const float *gamma_diag,
                   const float *c, const float *out_before, int b, int c0, size_t q, size_t q2,
                   double *magnitude);
/* One element of the factored output after the op: s_before[b][q][q'] + S. */
double cov_gold_factored_at(const struct conv_shape *s, const float *mu, const float *gamma_diag,
                            const float *s_before, int b, size_t q, size_t q2, double *magnitude);

#ifndef __CUDACC__
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

/* The diagonal blocks against the float64 gold at the plan of sums S(b, q, q') that
 * reference.h makes of B planes of Q x Q (every sum while that costs at most
 * GOLD_FULL_MAX_TERMS window terms): each planned sum checks its output in every block
 * c0; a sample is drawn from seed. In the full layout, every entry outside the blocks
 * must still be NaN. */
struct check_result cov_op_check(const struct conv_shape *s, int layout, uint64_t seed,
                                 void *const *before, void *const *after);
double cov_op_min_bytes(const struct conv_shape *s, int layout);
double cov_op_flops(const struct conv_shape *s, int layout);
#endif

#ifdef __cplusplus
}
#endif

#endif
