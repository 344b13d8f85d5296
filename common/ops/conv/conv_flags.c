#include "conv_flags.h"

#include <stdio.h>

#include "filters.h"
#include "op_params.h"

static const struct op_data_flag data_flags[CONV_DATA_FLAGS] = {
    [DATA_INPUT] = {.flag = "input", .kind = OP_DATA_READ},
    [DATA_WEIGHTS] = {.flag = "weights", .kind = OP_DATA_READ},
    [DATA_BIAS] = {.flag = "bias", .kind = OP_DATA_READ},
    [DATA_IMAGE] = {.flag = "image", .kind = OP_DATA_READ},
    [DATA_FILTER] = {.flag = "filter", .kind = OP_DATA_READ, .is_file = filter_spec_is_file},
    [DATA_OUT] = {.flag = "out", .kind = OP_DATA_WRITTEN},
};

/* A custom problem: one image and channel unless told. */
static const struct conv_shape custom_base = {1, 1, 1, 0, 0, 3, false};

/* .npy files or an image. */
static const char *check_data(const struct options *o, const char *shape_flag,
                              const char *size_flag, bool *given, char *why, size_t size)
{
    const char *const *d = o->data;
    *given = d[DATA_INPUT] || d[DATA_IMAGE];
    if (d[DATA_INPUT]) {
        if (o->preset || shape_flag || d[DATA_IMAGE] || d[DATA_FILTER]) {
            snprintf(why, size, "--input takes the problem from its files: drop %s",
                     o->preset       ? "--preset"
                     : shape_flag    ? shape_flag
                     : d[DATA_IMAGE] ? "--image"
                                     : "--filter");
            return why;
        }
        if (!d[DATA_WEIGHTS])
            return "--input needs --weights FILE.npy";
    } else if (d[DATA_WEIGHTS] || d[DATA_BIAS] || o->output_path) {
        snprintf(why, size, "%s needs --input FILE.npy",
                 d[DATA_WEIGHTS] ? "--weights"
                 : d[DATA_BIAS]  ? "--bias"
                                 : "--output");
        return why;
    }
    if (d[DATA_IMAGE]) {
        if (o->preset || size_flag) {
            snprintf(why, size, "--image takes the problem from the image: drop %s",
                     o->preset ? "--preset" : size_flag);
            return why;
        }
        if (!d[DATA_OUT])
            return "--image needs --out FILE.pgm|ppm";
    } else if (d[DATA_OUT]) {
        return "--out needs --image FILE";
    }
    return NULL;
}

/* A layer (several channels) has a bias, an image filter none. */
static void complete_shape(struct conv_shape *s)
{
    s->bias = s->cin > 1 || s->cout > 1;
}

static const char *shape_problem(const struct conv_shape *s, const double *param)
{
    (void)param;
    return shape_overflows_int32(s) ? "a tensor would have more than 2^31-1 elements (32-bit "
                                      "indexing)"
                                    : NULL;
}

static void print_usage(const struct op *op, const char *name)
{
    (void)op;
    printf("       %s --image FILE.pgm|ppm [--filter NAME|FILE] [--ksize R] --out FILE\n", name);
    printf("       %s --input IN.npy --weights W.npy [--bias B.npy] [--output OUT.npy]\n", name);
}

static void print_problem_help(const struct op *op, const char *default_preset)
{
    printf("problem (default: --preset %s):\n", default_preset);
    printf("  --preset NAME      a named problem (--list-presets); excludes the flags below\n");
    printf("  --size HxW         image height x width, 1..%d each (default from the preset)\n",
           MAX_SIDE);
    printf("  --batch N          images per batch, 1..%d (default 1)\n", MAX_BATCH);
    printf("  --cin C            input channels, 1..%d (default 1)\n", MAX_CHANNELS);
    printf("  --cout K           output channels, 1..%d (default 1)\n", MAX_CHANNELS);
    printf("  --ksize R          odd filter size, 1..%d (default 3; image mode %d)\n", MAX_KSIZE,
           IMAGE_DEFAULT_KSIZE);
    printf("  --filter NAME|FILE weights from a named filter or a text file instead of random\n");
    printf("                     values (%s)\n", filter_names());
    printf("  --list-presets     print the presets and exit\n");
    op_print_param_help(op);
    printf("  A custom problem with cin or cout > 1 is a network layer with a bias per output\n");
    printf("  channel; a single-channel problem is an image filter without bias.\n\n");
}

static void print_data_help(const struct op *op)
{
    printf("data (NumPy .npy, little-endian float32, C order):\n");
    printf("  --input FILE       NCHW, CHW or HW input; the problem follows its shape\n");
    printf("  --weights FILE     KCRS or RS weights (required with --input)\n");
    printf("  --bias FILE        K biases (optional)\n");
    printf("  --output FILE      where the result goes (optional)\n\n");
    if (op->apply_variant) {
        printf("image mode (runs variant '%s' on each plane of a PGM/PPM):\n", op->apply_variant);
        printf("  --image FILE       binary PGM (P5) or PPM (P6), maxval 255\n");
        printf("  --out FILE         the filtered image (absolute values, clamped to 0..255)\n\n");
    }
}

void conv_flags_declare(struct op *op)
{
    int presets = 0;
    while (preset_at(presets))
        presets++;
    op->presets = preset_at(0);
    op->preset_count = presets;
    op->custom_base = &custom_base;
    op->complete_shape = complete_shape;
    op->shape_problem = shape_problem;
    op->data_flags = data_flags;
    op->data_flag_count = CONV_DATA_FLAGS;
    op->check_data = check_data;
    op->print_usage = print_usage;
    op->print_problem_help = print_problem_help;
    op->print_data_help = print_data_help;
}
