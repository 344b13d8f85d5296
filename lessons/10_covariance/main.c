/* Lesson 10: the weight-noise covariance of a conv layer's output (seed 001), from the
 * seed's CPU loops and its one-thread-per-batch-element GPU port to a box filter that
 * writes the rank-1 factor once. docs/10_covariance.md walks through it. */
#include "kernels.h"
#include "lesson.h"
#include "problem.h"
#include "session.h"

/* The seed's loops are skipped above this many GFLOP unless named (--variant): one
 * thread takes about 3 s per run on cov-b4c32s18 (9.7 GFLOP). */
#define LOOPS_MAX_GFLOP 10.0
/* seed_port's threads each run Q^2*Ci*k^2 dependent iterations of tens of cycles:
 * above this many a run takes seconds. */
#define SEED_PORT_MAX_ITERATIONS 2e6

static struct cov_args cov_args_of(const struct op_args *a)
{
    struct cov_args c = {.shape = a->shape,
                         .mu = a->tensor[COV_MU],
                         .gamma = a->tensor[COV_GAMMA],
                         .c = a->tensor[COV_C],
                         .out = a->tensor[COV_OUT],
                         .scratch = a->scratch,
                         .stream = a->stream};
    return c;
}

static void run_loops(const struct op_args *a)
{
    cov_op_slow(&a->shape, a->tensor[COV_OUT], a->tensor[COV_GAMMA], a->tensor[COV_MU],
                a->tensor[COV_C]);
}

static void run_loops_openmp(const struct op_args *a)
{
    cov_op_slow_openmp(&a->shape, a->tensor[COV_OUT], a->tensor[COV_GAMMA], a->tensor[COV_MU],
                       a->tensor[COV_C]);
}

/* The loops recompute the window sum for every c0: 4 FLOPs (two multiplies, two adds)
 * per term, Co times over. */
static double loops_flops(const struct conv_shape *s)
{
    const double q = (double)cov_out_positions(s);
    return 4.0 * s->n * s->cout * q * q * s->cin * s->ksize * s->ksize;
}

static const char *seed_port_too_slow(const struct conv_shape *s)
{
    return covariance_seed_port_iterations(s) > SEED_PORT_MAX_ITERATIONS
               ? "each of its B threads would run over 2 million serial iterations (seconds "
                 "per run): cov-toy shows its cost"
               : NULL;
}

#define GPU_RUN(fn)                                                                          \
    static void run_##fn(const struct op_args *a)                                           \
    {                                                                                        \
        struct cov_args c = cov_args_of(a);                                                  \
        covariance_##fn(&c);                                                                 \
    }
GPU_RUN(seed_port)
GPU_RUN(thread_per_output)
GPU_RUN(shared_box)
GPU_RUN(factored)
GPU_RUN(factored_symmetric)

static void run_channels_summed(const struct op_args *a)
{
    struct cov_args c = cov_args_of(a);
    covariance_channels_summed(&c, COV_FULL);
}

static void run_channels_summed_factored(const struct op_args *a)
{
    struct cov_args c = cov_args_of(a);
    covariance_channels_summed(&c, COV_FACTORED);
}

static void run_channels_summed_symmetric(const struct op_args *a)
{
    struct cov_args c = cov_args_of(a);
    covariance_channels_summed_symmetric(&c);
}

static double symmetric_min_bytes(const struct conv_shape *s)
{
    return cov_min_bytes(s, COV_FACTORED, true);
}

static size_t channels_summed_scratch(const struct op_variant *v, const struct conv_shape *s,
                                      const double *param)
{
    (void)v, (void)param;
    return covariance_channels_summed_scratch(s);
}

/* The op takes no flags of its own. */
static const char *shape_problem(const struct conv_shape *s, const double *param)
{
    (void)param;
    return cov_shape_problem(s);
}

/* Before any work (and before the variants are asked whether they can run): the
 * --gamma file's diagonal blocks, read for their symmetry, so the variants that use it
 * are skipped with the reason on a gamma that does not have it. A file that cannot be
 * read is left to op_files_read, which names what is wrong; a drawn gamma is
 * symmetric. */
static int prepare(const struct op *op, struct options *o)
{
    (void)op;
    const char *gamma = o->mode == MODE_FILES ? o->op_file_path[COV_GAMMA] : NULL;
    struct cov_asymmetry a = {0};
    if (gamma)
        cov_gamma_file_asymmetry(gamma, &a);
    cov_note_gamma(gamma, &a);
    return EXIT_PASS;
}

static bool draw(const struct op_draw *d, char *err, size_t err_size)
{
    (void)err, (void)err_size;
    cov_op_draw(d->shape, d->layout, d->seed, d->tensor);
    return true;
}

static struct check_result check(const struct op_check *c)
{
    return cov_op_check(c->shape, c->layout, c->seed, c->before, c->after);
}

static const struct op_variant variants[] = {
    {.name = "cpu_loops", .what = "the seed's op_slow in C, one thread (full 7-D layout)",
     .layout = COV_FULL, .cpu = true, .run = run_loops, .flops = loops_flops,
     .max_gflop = LOOPS_MAX_GFLOP},
    {.name = "cpu_openmp", .what = "the same loops on every core (OpenMP)", .layout = COV_FULL,
     .cpu = true, .parallel = true, .run = run_loops_openmp, .flops = loops_flops,
     .max_gflop = LOOPS_MAX_GFLOP},
    {.name = "seed_port", .what = "the seed's Numba kernel in CUDA C: a thread per batch element",
     .layout = COV_FULL, .unsupported = seed_port_too_slow, .run = run_seed_port},
    {.name = "thread_per_output", .what = "a thread per (b, q, q'), coalesced along q'",
     .layout = COV_BLOCKS, .run = run_thread_per_output},
    {.name = "shared_box", .what = "the window sum as a box filter on shared-memory tiles",
     .layout = COV_BLOCKS, .run = run_shared_box},
    {.name = "factored", .what = "S written once (rank 1 in c0) instead of Co blocks",
     .layout = COV_FACTORED, .run = run_factored},
    {.name = "factored_symmetric", .what = "half the lags, S(q,q') = S(q',q) written twice",
     .layout = COV_FACTORED, .unsupported = cov_needs_symmetric_gamma,
     .run = run_factored_symmetric, .min_bytes = symmetric_min_bytes},
    {.name = "channels_summed", .what = "the channel sum first, then 9 taps per output: the seed's layout",
     .layout = COV_FULL, .scratch_bytes = channels_summed_scratch,
     .run = run_channels_summed},
    {.name = "channels_summed_factored", .what = "the channel sum first, S written once",
     .layout = COV_FACTORED, .scratch_bytes = channels_summed_scratch,
     .run = run_channels_summed_factored},
    {.name = "channels_summed_symmetric", .what = "G on and above its diagonal, mirrored: half of gamma read",
     .layout = COV_FACTORED, .unsupported = cov_needs_symmetric_gamma,
     .scratch_bytes = channels_summed_scratch, .run = run_channels_summed_symmetric,
     .min_bytes = symmetric_min_bytes},
};

static const struct op covariance = {
    .shape_help = "--batch B, --cin Ci, --cout Co, --size HxW the input, --ksize k the window",
    .presets = cov_presets,
    .preset_count = COV_PRESET_COUNT,
    .variants = variants,
    .variant_count = (int)(sizeof variants / sizeof variants[0]),
    .layout_names = cov_layout_names,
    .shape_problem = shape_problem,
    .tensors = cov_op_tensors,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .min_bytes = cov_op_min_bytes,
    .flops = cov_op_flops,
    .file_sets = cov_file_sets,
    .file_set_count = COV_FILE_SET_COUNT,
    .dim_names = cov_dim_names,
};

static const struct lesson lesson = {
    .name = "10_covariance",
    .title = "covariance propagation through a conv layer: a 7-D op at memory speed",
    .default_preset = "cov-b8c16s16",
    .min_compute_capability = 75,
    .op = &covariance,
};

int main(int argc, char **argv)
{
    return lesson_main(&lesson, argc, argv);
}
