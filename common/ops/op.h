/* An op: the problem a lesson's kernels solve, and everything the harness needs to run,
 * check and time them. The batched convolution of lessons 01-09 is one (conv_op.h, built
 * from the lesson's conv_variant list); lesson 10's covariance and lesson 11's video are
 * declared by their lessons. For every op the harness (op_run.h) does the same: flags
 * and presets, inputs drawn from the seed into every rotated buffer set, library rows
 * (cuDNN's) to compare with, one checked run into poisoned memory, timing, the roofline,
 * the table and the CSV.
 *
 * The op's shape is a struct conv_shape, read as the lesson's page says (the CSV's
 * n, cin, cout, h, w, ksize columns). Its data is a list of tensors whose number, sizes
 * and meaning depend on the layout a variant declares: the op draws them on the host,
 * the harness copies them to the device, and the op checks the result against its own
 * float64 gold. */
#ifndef OP_H
#define OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "conv_problem.h"
#include "gpu_needs.h"
#include "options.h"
#include "report.h"
#include "tensor_format.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

struct session;

#define OP_MAX_FILE_DIMS 8 /* NPY_MAX_DIMS */
#define OP_MAX_DIM_NAMES 16
#define OP_MAX_FILE_SETS 8
#define OP_MAX_BASELINES 16

/* A number the op reads from a flag of its own (lesson 11's --threshold). Its value
 * reaches the op's callbacks and every run as param[i], and the CSV's params column as
 * flag=value. */
struct op_param {
    const char *flag; /* without the leading "--" */
    const char *help; /* one line for --help */
    double fallback, lo, hi;
    bool integer;
    /* The number of GPUs the run uses, from --device on (0: every one from there): the
     * harness opens them, tells the variants (op_args.gpus, gpu_info.gpus) and refuses
     * more than the machine has. */
    bool gpus;
};

/* A tensor of one of the op's file sets read from a NumPy .npy file (--<flag> FILE.npy)
 * and, when the op writes it, written with --output. Its shape is a list of the op's
 * named dimensions (op.dim_names): a name stands for one size in every file, so the
 * files must agree, and the problem's shape follows from them (shape_of_files). */
struct op_file {
    const char *flag; /* without the leading "--": the name the op's users give the tensor */
    const char *help; /* one line for --help */
    int rank;
    int dim[OP_MAX_FILE_DIMS]; /* indices into op.dim_names */
};

/* .npy files in and out (op_files.h): the tensors of one layout the op's users hold
 * (lesson 10's: the seed's 7-D tensors, or their channel-diagonal blocks). files[i] is
 * tensor i of `layout`, exactly one of them written. Every set of an op names the same
 * flags in the same order, and no two sets have the same rank for every file: the
 * ranks of the files a user gives pick the set. */
struct op_file_set {
    const char *name; /* "the seed's layout": for --help and errors */
    const struct op_file *files;
    int file_count; /* every tensor of `layout` */
    int layout;
    /* The shape of files whose dimensions have these sizes (dim[i] is dim_names[i]'s,
     * 1..INT_MAX for every name a file uses); false when there is none, with one line
     * in why and *culprit the file to name. op.shape_problem is asked too. */
    bool (*shape_of_files)(const size_t *dim, struct conv_shape *s, int *culprit, char *why,
                           size_t why_size);
    /* One buffer set's tensors in a layout from the files' values (file, in this set's
     * layout), as draw fills them (NaN wherever the op must not write). */
    void (*from_files)(const struct conv_shape *s, int layout, void *const *file,
                       void *const *tensor);
    /* The written tensor of `file` (the files' values) updated in place to its value
     * after a run in a layout whose written tensors are `after`. */
    void (*to_files)(const struct conv_shape *s, int layout, void *const *file, void *const *after);
    /* Optional: whether to_files can write back a run in `layout` (NULL: every layout
     * can), and why the others cannot, for the error line of --output. */
    bool (*writes)(int layout);
    const char *writes_why;
};

/* A flag of the op's own that names data (the convolution's --input, --image, --out):
 * its value reaches options.data[i]. The harness checks, before any work, that no file
 * written is one read (OP_DATA_READ), and that a written one may be written. */
enum op_data_kind { OP_DATA_READ, OP_DATA_WRITTEN };

struct op_data_flag {
    const char *flag; /* without the leading "--" */
    enum op_data_kind kind;
    /* Optional, for a flag whose value may name something other than a file (--filter
     * gaussian): whether this value is a file. */
    bool (*is_file)(const char *value);
};

/* An op's layouts are its own: an index into op.layout_names. */
struct op_tensor {
    const char *name; /* "the input": for errors (out of memory) */
    size_t bytes;
    bool written; /* the op writes it (in place: it is read too); the others are inputs */
    bool shared;  /* one copy for every buffer set (the convolution's weights): drawn with
                   * set 0 only, so the rotation moves the data a real layer moves */
};

struct op;

/* The seed of buffer set `set`: sets after the first are drawn from seeds this far
 * apart, so no two sets hold the same data. */
static inline uint64_t op_set_seed(uint64_t seed, int set)
{
    return seed + (uint64_t)set * 0x9e3779b97f4a7c15ull;
}

/* What an op's draw fills: one buffer set's tensors of a layout, on the host. */
struct op_draw {
    const struct op *op;
    const struct conv_shape *shape;
    const double *param;
    int layout;
    int set;       /* 0: the problem's own data (the convolution's files); others: more of it */
    uint64_t seed; /* this set's */
    void *const *tensor; /* NULL for a shared tensor in a set after the first */
};

/* What a variant's run gets. tensor[i] is op.tensors()'s i-th tensor of the variant's
 * layout: device pointers for GPU variants, host pointers for CPU ones. */
struct op_args {
    struct conv_shape shape;
    const double *param; /* op.param_count values, in the order of op.params */
    int frame;           /* a sequence op's frame, 0, 1, ... in order; 0 otherwise */
    void *tensor[OP_MAX_TENSORS];
    void *scratch; /* scratch_bytes() the harness owns; NULL when none. In a sequence it
                    * is the variant's state: kept from one frame to the next. */
    cudaStream_t stream;
    int device, gpus; /* the GPUs the run uses: device, device + 1, ... (gpus of them) */
    const struct op_variant *variant; /* the one running (its impl, for a typed op) */
};

struct op_variant {
    const char *name; /* short, for --variant and the CSV */
    const char *what; /* one line for --help */
    int layout;
    enum dtype dtype; /* its arithmetic: the CSV's dtype, the unit of its roofline (zero: fp32) */
    bool cpu;      /* runs on the host (one thread, or every OpenMP thread when parallel) */
    bool parallel;
    /* NULL when the variant handles this shape, else why not (shown in the table). */
    const char *(*unsupported)(const struct conv_shape *s);
    /* GPU variants: what it needs of the GPU and the build beyond the lesson's minimum
     * compute capability (zero: nothing); one that cannot run is skipped with the
     * reason, not a failure. */
    struct gpu_needs needs;
    /* Optional: working memory the harness allocates before setup and frees after
     * teardown. setup and teardown are optional and untimed. */
    size_t (*scratch_bytes)(const struct op_variant *v, const struct conv_shape *s,
                            const double *param);
    void (*setup)(const struct op_args *a);
    void (*teardown)(const struct op_args *a);
    /* Optional, untimed, for a variant whose result lives elsewhere while it runs (lesson
     * 12's, on several GPUs): after a checked run, copies it into the written tensors
     * of a->tensor, which the harness then reads (an op without frames). */
    void (*collect)(const struct op_args *a);
    /* GPU: enqueue on a->stream and check the launch. CPU: compute before returning.
     * Work on other GPUs starts after what a->stream holds and ends before what it
     * holds next (events), so the harness's events on a->stream time it all. */
    void (*run)(const struct op_args *a);
    /* Optional: FLOPs of this variant's algorithm when they differ from op.flops
     * (a loop nest that recomputes what it could share). */
    double (*flops)(const struct conv_shape *s);
    /* Optional: minimum bytes when the variant needs fewer than its layout's (it uses a
     * property every input of the op has, such as a symmetry). */
    double (*min_bytes)(const struct conv_shape *s);
    /* Optional: the share of its FLOPs the variant does on these inputs (tensors as
     * drawn, on the host), when it depends on the data (work skipped where nothing
     * changed); `text` gets key=value;... for the CSV's params column. */
    double (*work_share)(const struct conv_shape *s, const double *param,
                         void *const *tensor, char *text, size_t size);
    /* Above this many GFLOP (its own flops) the variant is skipped unless named with
     * --variant; 0 means no limit. */
    double max_gflop;
    int kind; /* the op's own tag, for its check (e.g. exact or within a threshold) */
    const void *impl; /* the op's own declaration of the variant (the convolution's
                       * conv_variant), for callbacks shared by its variants */
};

/* What the op's check gets: the tensors as drawn (before) and the written tensors
 * after one run (after; after frame `frame` of a sequence), on the host. */
struct op_check {
    const struct op *op;
    const struct conv_shape *shape;
    const double *param;
    const struct op_variant *variant;
    int layout, frame;
    uint64_t seed; /* the run's: a sampled check draws its sample from it */
    void *const *before;
    void *const *after;
    char *params; /* the check may append key=value;... here for the CSV's params column */
    size_t params_size;
};

/* A library's row (cuDNN's) the op's variants are compared with: its own row in the
 * table, timed before the variants on the same problem, its time each compared
 * variant's cudnn_ms. `id` is the op's own (the convolution's: a format). */
struct op_baseline {
    enum dtype dtype;
    const char *layout; /* the CSV's layout column */
    int id;
};

/* What timing a baseline gets: the run's GPU and flags. */
struct op_bench {
    const struct session *session;
    const struct options *opts;
};

struct op {
    void *context; /* the op's own state, for its callbacks (NULL for a static op) */
    /* How the shape flags read, for --help (e.g. "batch B, Ci -> Co channels, ..."). */
    const char *shape_help;
    const struct conv_preset *presets;
    int preset_count;
    const struct op_variant *variants;
    int variant_count;
    /* Optional: a custom problem's shape before the shape flags change it (NULL: the
     * default preset's), and what completes it after (the convolution's bias). */
    const struct conv_shape *custom_base;
    void (*complete_shape)(struct conv_shape *s);
    const char *const *layout_names; /* indexed by op_variant.layout */
    /* The op's own flags (at most OP_MAX_PARAMS). */
    const struct op_param *params;
    int param_count;
    /* NULL when the op is defined for this shape and these flags, else one line saying
     * why not (naming the flag when a flag is at fault). */
    const char *(*shape_problem)(const struct conv_shape *s, const double *param);
    /* Optional: NULL when the variants can run this shape, else why none of them can
     * (a lesson of single-channel kernels); shown as each variant's own unsupported. */
    const char *(*unsupported)(const struct conv_shape *s);
    /* Optional, a sequence (lesson 11's video): a run is frames(s) calls of the variant's
     * run in order, op_args.frame = 0, 1, ...; the written tensors and the scratch are
     * kept between frames, and every frame is checked. A timed pass runs frame 0
     * untimed and times each later frame alone (device events, or the host clock for a
     * CPU variant); a row's time is per frame. */
    int (*frames)(const struct conv_shape *s);
    /* Optional, an op whose variants spread over several GPUs (gpu_needs.gpus): the
     * variant on one GPU whose time T1, in the same run, gives each such row's
     * efficiency=T1/(gpus*T) in the CSV's params. */
    const char *scaling_reference;
    /* The tensors of one buffer set in a layout, in the order op_args.tensor holds them;
     * returns how many (at most OP_MAX_TENSORS). */
    int (*tensors)(const struct conv_shape *s, int layout, struct op_tensor *t);
    /* Fills one buffer set's tensors on the host: inputs from the seed (or files the op
     * reads), written tensors with their value before the op (NaN wherever the op must
     * not write). false, with one line in err naming the file, when an input cannot be
     * read. */
    bool (*draw)(const struct op_draw *d, char *err, size_t err_size);
    /* Compares the written tensors after one run with the float64 gold of the tensors
     * as drawn. */
    struct check_result (*check)(const struct op_check *c);
    /* Minimum traffic in bytes of one run in a layout, and its FLOPs. */
    double (*min_bytes)(const struct conv_shape *s, int layout);
    double (*flops)(const struct conv_shape *s, int layout);

    /* Optional, .npy files in and out (op_file_set): given, they are all given together
     * and take the place of the shape flags; buffer set 0 holds their values in each
     * variant's layout, and --output writes the written one after the checked run of
     * the variant --variant names. */
    const struct op_file_set *file_sets;
    int file_set_count;           /* at most OP_MAX_FILE_SETS */
    const char *const *dim_names; /* at most OP_MAX_DIM_NAMES, for --help and errors */

    /* Optional, library rows: the ones variant v is compared with (its cudnn_ms is the
     * fastest of them), or with v NULL those timed whatever runs; returns how many, at
     * most OP_MAX_BASELINES. time_baseline runs one on the op's problem, checked, with
     * the harness's protocol, filling row's time, check, rates and params (or
     * row->skipped); the row is named "cudnn". */
    int (*baselines)(const struct op *op, const struct op_variant *v, struct op_baseline *out);
    void (*time_baseline)(const struct op *op, const struct op_baseline *b,
                          const struct op_bench *bench, struct result_row *row);
    /* Optional: the op's problem line (sizes, traffic, roofline, cache), in place of the
     * harness's. */
    void (*print_problem)(const struct op *op, const struct op_bench *bench);

    /* Optional, the op's own data in and out (the convolution's --input or --image). */
    const struct op_data_flag *data_flags;
    int data_flag_count; /* at most OP_MAX_DATA_FLAGS */
    /* NULL when the data flags given go together (shape_flag: the first of --size,
     * --batch, --cin, --cout and --ksize given, size_flag the same without --ksize;
     * NULL when none), else one line naming the flag at fault; *given: they give the
     * problem. */
    const char *(*check_data)(const struct options *o, const char *shape_flag,
                              const char *size_flag, bool *given, char *why, size_t size);
    /* Before any GPU work, once the flags are checked: the op's problem made from its
     * data, or from the shape flags and the seed (o->shape may change); 0, or 2 after
     * one error line naming the flag or file. release frees what prepare made and the
     * op's context (lesson_main calls it last). */
    int (*prepare)(const struct op *op, struct options *o);
    void (*release)(const struct op *op);
    /* When the data flags give the problem, the run applies one variant once (--variant,
     * else apply_variant, else the first), checked and untimed, and write saves its
     * written tensors (`after`, in the variant's layout); false after one error line
     * naming the flag. *path is the file written (NULL: none). */
    const char *apply_variant;
    bool (*write)(const struct op *op, int layout, void *const *after, const char **path);
    /* Optional --help: the usage lines after the first, the problem's flags and the
     * data's, in place of the harness's (which describe presets, shape flags and
     * file_sets). */
    void (*print_usage)(const struct op *op, const char *name);
    void (*print_problem_help)(const struct op *op, const char *default_preset);
    void (*print_data_help)(const struct op *op);
};

#ifdef __cplusplus
}
#endif

#endif
