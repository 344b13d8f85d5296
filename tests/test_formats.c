/* Storage formats, byte counts, rooflines per unit, the choice of the cuDNN row and
 * the build-architecture check: each must give the right answer and each can be
 * caught giving a wrong one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_op.h"
#include "cudnn_rows.h"
#include "gpu_info.h"
#include "op_buffers.h"
#include "output_capture.h"
#include "report.h"
#include "roofline.h"
#include "tensor_format.h"
#include "unit.h"

static void half_conversion(void)
{
    CHECK(float_to_half_bits(1.0f) == 0x3c00 && float_to_half_bits(-2.0f) == 0xc000);
    CHECK(float_to_half_bits(65504.0f) == 0x7bff);              /* largest half */
    CHECK(float_to_half_bits(65520.0f) == 0x7c00);              /* rounds to infinity */
    CHECK(float_to_half_bits(0x1.0p-24f) == 0x0001);            /* smallest subnormal */
    CHECK(float_to_half_bits(0x1.0p-26f) == 0x0000);            /* below half of it */
    CHECK(float_to_half_bits(1.0f + 0x1.0p-11f) == 0x3c00);     /* tie to even: down */
    CHECK(float_to_half_bits(1.0f + 3 * 0x1.0p-11f) == 0x3c02); /* tie to even: up */
    CHECK(isnan(half_bits_to_float(float_to_half_bits(NAN))));
    /* Every finite half survives the trip through float. */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        bad += float_to_half_bits(half_bits_to_float((uint16_t)h)) != h;
    }
    CHECK(bad == 0);
}

static void bf16_conversion(void)
{
    CHECK(float_to_bf16_bits(1.0f) == 0x3f80 && bf16_bits_to_float(0x3f80) == 1.0f);
    CHECK(float_to_bf16_bits(1.0f + 0x1.0p-8f) == 0x3f80);     /* tie to even: down */
    CHECK(float_to_bf16_bits(1.0f + 3 * 0x1.0p-8f) == 0x3f82); /* tie to even: up */
    CHECK(dtype_round(DTYPE_BF16, 0.1f) != 0.1f && dtype_round(DTYPE_FP32, 0.1f) == 0.1f);
    CHECK(fabsf(dtype_round(DTYPE_BF16, 0.1f) - 0.1f) <= 0.1f * 0x1.0p-8f);
    CHECK(dtype_round(DTYPE_BINARY, -0.3f) == -1.0f && dtype_round(DTYPE_BINARY, 0.0f) == 1.0f);
}

/* NCHW -> NHWC puts channels innermost; bits pack 32 channels per word. */
static void layouts(void)
{
    struct dims4 d = {2, 3, 2, 2};
    float src[24];
    for (int i = 0; i < 24; i++)
        src[i] = (float)i;
    float nhwc[24], back[24];
    tensor_from_nchw(src, d, DTYPE_FP32, LAYOUT_NHWC, nhwc);
    /* (n=1, y=0, x=1) channel 2 is NCHW element ((1*3+2)*2+0)*2+1 = 21. */
    CHECK(nhwc[((1 * 2 + 0) * 2 + 1) * 3 + 2] == 21.0f);
    tensor_to_nchw(nhwc, d, DTYPE_FP32, LAYOUT_NHWC, back);
    int same = 0;
    for (int i = 0; i < 24; i++)
        same += back[i] == src[i];
    CHECK(same == 24);
    struct dims4 b = {1, 33, 1, 2}; /* 33 channels: two words per pixel */
    float signs[66];
    for (int i = 0; i < 66; i++)
        signs[i] = i % 3 == 0 ? -1.0f : 1.0f; /* channel c, x: index c * 2 + x */
    uint32_t words[4];
    CHECK(tensor_bytes(b, DTYPE_BINARY, LAYOUT_BITS) == sizeof words);
    tensor_from_nchw(signs, b, DTYPE_BINARY, LAYOUT_BITS, words);
    uint32_t expect0 = 0;
    for (int c = 0; c < 32; c++)
        expect0 |= (uint32_t)((c * 2) % 3 != 0) << c;
    CHECK(words[0] == expect0);
    CHECK(words[1] == ((32 * 2) % 3 != 0 ? 1u : 0u)); /* channel 32; padding bits zero */
}

static void no_run(const struct conv_args *a)
{
    (void)a;
}

/* What one rotated buffer set of a variant's format adds (the convolution op's input and
 * output; the shared weights, bias and scale are there once). */
static size_t set_bytes(const struct conv_shape *s, enum dtype d, enum layout l,
                        enum output_format o)
{
    const struct conv_variant v = {
        .name = "v", .dtype = d, .layout = l, .output = o, .run = no_run};
    const struct conv_spec spec = {.variants = &v, .variant_count = 1};
    const struct op *op = conv_op(&spec);
    const size_t bytes = op_set_bytes(op, s, op->variants[0].layout);
    op->release(op);
    return bytes;
}

/* Bytes follow the element size: a count made with sizeof(float) for fp16 is caught. */
static void byte_counts(void)
{
    struct conv_shape s = {4, 64, 128, 32, 32, 3, true};
    size_t fp32 = set_bytes(&s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES);
    CHECK(fp32 == (4ull * 64 * 1024 + 4ull * 128 * 1024) * 4);
    CHECK(set_bytes(&s, DTYPE_TF32, LAYOUT_NHWC, OUTPUT_VALUES) == fp32);
    CHECK(set_bytes(&s, DTYPE_FP16, LAYOUT_NHWC, OUTPUT_VALUES) == fp32 / 2);
    CHECK(set_bytes(&s, DTYPE_BF16, LAYOUT_NCHW, OUTPUT_VALUES) == fp32 / 2);
    /* binary: 64 channels in 2 words per pixel in; the output is float32 */
    CHECK(set_bytes(&s, DTYPE_BINARY, LAYOUT_BITS, OUTPUT_VALUES) ==
          4ull * 1024 * 2 * 4 + 4ull * 128 * 1024 * 4);
    /* packed signs out: 128 channels in 4 words per pixel */
    CHECK(set_bytes(&s, DTYPE_BINARY, LAYOUT_BITS, OUTPUT_SIGN_BITS) ==
          4ull * 1024 * 2 * 4 + 4ull * 1024 * 4 * 4);
    CHECK(output_dtype(DTYPE_FP16) == DTYPE_FP16 && output_dtype(DTYPE_TF32) == DTYPE_FP32);
    CHECK(dtype_storage_bits(DTYPE_BF16, LAYOUT_NHWC) == 16);
    CHECK(dtype_storage_bits(DTYPE_BINARY, LAYOUT_BITS) == 1);
}

/* A binary tensor in nchw or nhwc holds each sign as a float +1 or -1: 4 bytes per
 * element (a count of 1 bit per element would be 32 times too small), and the values
 * are the signs whatever was drawn. */
static void binary_as_floats(void)
{
    struct conv_shape s = {4, 64, 128, 32, 32, 3, true};
    CHECK(set_bytes(&s, DTYPE_BINARY, LAYOUT_NHWC, OUTPUT_VALUES) ==
          set_bytes(&s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES));
    CHECK(set_bytes(&s, DTYPE_BINARY, LAYOUT_NCHW, OUTPUT_VALUES) ==
          set_bytes(&s, DTYPE_FP32, LAYOUT_NCHW, OUTPUT_VALUES));
    struct dims4 d = {1, 3, 1, 2};
    const float src[6] = {0.25f, -0.5f, 0.0f, -0.0f, -3.0f, 7.0f}; /* NCHW: c0 x0, c0 x1, ... */
    float nhwc[6];
    tensor_from_nchw(src, d, DTYPE_BINARY, LAYOUT_NHWC, nhwc);
    const float expect[6] = {1, 1, -1, -1, 1, 1}; /* pixel x0: c0 c1 c2, then x1 */
    int same = 0;
    for (int i = 0; i < 6; i++)
        same += nhwc[i] == expect[i];
    CHECK(same == 6);
}

static void names_round_trip(void)
{
    for (int i = 0; i < DTYPE_COUNT; i++) {
        enum dtype d;
        CHECK(dtype_from_name(dtype_name((enum dtype)i), &d) && d == (enum dtype)i);
    }
    enum layout l;
    CHECK(layout_from_name("nhwc", &l) && l == LAYOUT_NHWC && !layout_from_name("chwn", &l));
}

/* Each dtype's roofline uses its own unit: a tensor-core row is not held to the
 * FP32 peak (it would show over 100%). */
static void roofline_units(void)
{
    CHECK(unit_of(DTYPE_FP32) == UNIT_FP32_FMA && unit_of(DTYPE_TF32) == UNIT_TF32_TC);
    CHECK(unit_of(DTYPE_BF16) == UNIT_FP16_TC && unit_of(DTYPE_BINARY) == UNIT_BINARY_TC);
    CHECK(unit_work_factor(DTYPE_3XTF32) == 3 && unit_work_factor(DTYPE_TF32) == 1);
    /* H100/H200: 132 SMs at 1.98 GHz: 66.9 FP32, 535 TF32, 1070 FP16 TFLOP/s */
    CHECK(tensor_flops_per_clock(UNIT_TF32_TC, 9, 0, false) == 16 * fp32_lanes_per_sm(9, 0));
    CHECK(tensor_flops_per_clock(UNIT_FP16_TC, 9, 0, false) == 4096);
    CHECK(tensor_flops_per_clock(UNIT_FP16_TC, 8, 0, false) == 2048);
    CHECK(tensor_flops_per_clock(UNIT_TF32_TC, 7, 5, false) == 0); /* Turing has no TF32 */
    /* GeForce: fp32 accumulation at half rate (an RTX 4090: 512, not 1024, per SM). */
    CHECK(tensor_flops_per_clock(UNIT_FP16_TC, 8, 9, true) == 512);
    CHECK(tensor_flops_per_clock(UNIT_FP16_TC, 8, 9, false) == 1024);
    CHECK(tensor_flops_per_clock(UNIT_TF32_TC, 8, 6, true) == 256);
    struct roofline no_peak = {1e9, 1e15, 1000, 0};         /* unknown peak: memory roof only */
    CHECK(fabs(roofline_time_ms(&no_peak) - 1.0) < 1e-12 && roofline_memory_bound(&no_peak));
}

/* The row is the fastest algorithm that ran and passed, not the first or the one
 * cuDNN's own search ranked first. */
static void cudnn_row_is_the_fastest_passing(void)
{
    struct algo_trial t[5] = {
        {.algorithm = 0, .pass = true, .time = {.median_ms = 0.30}},
        {.algorithm = 1, .pass = true, .time = {.median_ms = 0.22}},
        {.algorithm = 2, .pass = false, .time = {.median_ms = 0.05}, .skipped = "FAIL"},
        {.algorithm = 3, .skipped = "not offered for this problem"},
        {.algorithm = 4, .pass = true, .time = {.median_ms = 0.25}},
    };
    CHECK(fastest_passing(t, 5) == 1);
    t[1].pass = false;
    CHECK(fastest_passing(t, 5) == 4);
    CHECK(fastest_passing(t + 2, 2) == -1);
}

/* An algorithm's time is its fastest round: a slow episode in one round is dropped, and
 * the first round is kept whatever it measured (no stale screening time survives). */
static void cudnn_time_is_the_fastest_round(void)
{
    struct timing kept = {.median_ms = 0.01}; /* a screening time, to be replaced */
    keep_faster_round(&kept, (struct timing){.median_ms = 0.0683, .reps = 50}, 0);
    CHECK(kept.median_ms == 0.0683 && kept.reps == 50);
    keep_faster_round(&kept, (struct timing){.median_ms = 0.0534, .reps = 50}, 1);
    CHECK(kept.median_ms == 0.0534);
    keep_faster_round(&kept, (struct timing){.median_ms = 0.0690, .reps = 50}, 2);
    CHECK(kept.median_ms == 0.0534);
}

/* The table of these variants: every line's format column starts where the header's
 * does, one space after a variant column of `column` characters. */
static void check_table_columns(const char *const *names, int count, int column)
{
    int longest = 0;
    for (int i = 0; i < count; i++)
        longest = (int)strlen(names[i]) > longest ? (int)strlen(names[i]) : longest;
    struct output_capture c;
    output_capture_begin(&c, stdout);
    print_table_header(longest);
    for (int i = 0; i < count; i++) {
        struct result_row row = {.variant = names[i], .layout = "NCHW", .roofline_pct = NAN,
                                 .cudnn_ms = NAN};
        print_row(&row, longest);
    }
    char text[OUTPUT_CAPTURE_SIZE];
    snprintf(text, sizeof text, "%s", output_capture_end(&c));
    CHECK(strncmp(text + column + 1, "format", 6) == 0);
    int lines = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), lines++)
        CHECK((int)strlen(line) > column + 1 && line[column] == ' ' && line[column + 1] != ' ');
    CHECK(lines == 1 + count);
}

/* The console table's first column is as wide as the longest variant name it may show,
 * and at least 20. */
static void table_columns_fit_long_names(void)
{
    static const char *const names[] = {"a_variant_of_26_characters", "short"};
    check_table_columns(names + 1, 1, 20);
    check_table_columns(names, 2, 26);
}

static void jit_detection(void)
{
    CHECK(binary_runs_jit("75", 9, 0)); /* sm_75 code, PTX for the H200 */
    CHECK(!binary_runs_jit("90", 9, 0));
    CHECK(!binary_runs_jit("80", 8, 6)); /* sm_80 code runs on sm_86 */
    CHECK(binary_runs_jit("86", 8, 0));  /* but not the other way */
    CHECK(!binary_runs_jit("75;90-real", 9, 0));
    CHECK(binary_runs_jit("90-virtual", 9, 0)); /* PTX only */
    CHECK(!binary_runs_jit("90a", 9, 0) && binary_runs_jit("90a", 9, 1));
    CHECK(!binary_runs_jit("native", 9, 0));
}

static const struct unit_case cases[] = {
    {"half_conversion", half_conversion},
    {"bf16_conversion", bf16_conversion},
    {"layouts", layouts},
    {"byte_counts", byte_counts},
    {"binary_as_floats", binary_as_floats},
    {"names_round_trip", names_round_trip},
    {"roofline_units", roofline_units},
    {"cudnn_row_is_the_fastest_passing", cudnn_row_is_the_fastest_passing},
    {"cudnn_time_is_the_fastest_round", cudnn_time_is_the_fastest_round},
    {"jit_detection", jit_detection},
    {"table_columns_fit_long_names", table_columns_fit_long_names},
};

UNIT_MAIN(cases)
