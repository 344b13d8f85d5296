/* The arithmetic the tables are built from: problem sizes, roofline, timing
 * statistics, and the reproducible random numbers. */
#include <math.h>

#include "conv_problem.h"
#include "gpu_info.h"
#include "rng.h"
#include "roofline.h"
#include "timing.h"
#include "unit.h"

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fabs(b);
}

static void problem_counts(void)
{
    const struct conv_shape *s = &find_preset("unet-64x128")->shape;
    CHECK(input_count(s) == 4ull * 64 * 256 * 256);
    CHECK(output_count(s) == 4ull * 128 * 256 * 256);
    CHECK(weight_count(s) == 128ull * 64 * 9 && bias_count(s) == 128);
    CHECK(close_to(conv_flops(s), 2.0 * 4 * 128 * 256 * 256 * 64 * 9));
    CHECK(close_to(conv_min_bytes(s),
                   4.0 * (4 * 64 * 65536.0 + 128 * 64 * 9 + 128 + 4 * 128 * 65536.0)));
}

static void presets_match_the_design(void)
{
    const struct conv_shape *seed = &find_preset("seed000")->shape;
    CHECK(seed->h == 1000 && seed->w == 2000 && seed->ksize == 3 && seed->n == 1);
    CHECK(find_preset("big7")->shape.ksize == 7 && find_preset("big7")->shape.h == 8192);
    int unet = 0;
    const struct conv_preset *p;
    for (int i = 0; (p = preset_at(i)) != NULL; i++)
        unet += strncmp(p->name, "unet-", 5) == 0 && p->shape.n == 4 && p->shape.bias;
    CHECK(unet == 10);
    const struct conv_shape *bnn = &find_preset("bnn-b64c512s14")->shape;
    CHECK(bnn->n == 64 && bnn->cin == 512 && bnn->cout == 512 && bnn->h == 14 && bnn->bias);
    CHECK(find_preset("bnn-b16c256s28") && find_preset("bnn-b1c1024s32"));
    CHECK(find_preset("nope") == NULL);
}

static void overflow_detection(void)
{
    struct conv_shape ok = {1, 1, 1, 46340, 46340, 3, false};
    struct conv_shape too_big = {1, 1, 1, 65536, 65536, 3, false};
    struct conv_shape wide_channels = {4, 4096, 64, 512, 512, 3, true};
    CHECK(!shape_overflows_int32(&ok));
    CHECK(shape_overflows_int32(&too_big));
    CHECK(shape_overflows_int32(&wide_channels));
}

static void roofline_memory_and_compute_bound(void)
{
    /* 1 GB at 1000 GB/s is 1 ms; 10 GFLOP at 1000 GFLOP/s is 10 ms. */
    struct roofline r = {1e9, 1e10, 1000, 1000};
    CHECK(close_to(roofline_time_ms(&r), 10) && !roofline_memory_bound(&r));
    r.flops = 1e8;
    CHECK(close_to(roofline_time_ms(&r), 1) && roofline_memory_bound(&r));
    CHECK(close_to(roofline_percent(&r, 2), 50));
    CHECK(close_to(achieved_gbps(1e9, 2), 500));
    CHECK(close_to(achieved_gflops(1e10, 4), 2500));
}

static void fp32_peak_lanes(void)
{
    CHECK(fp32_lanes_per_sm(7, 5) == 64);
    CHECK(fp32_lanes_per_sm(8, 0) == 64);
    CHECK(fp32_lanes_per_sm(8, 6) == 128);
    CHECK(fp32_lanes_per_sm(9, 0) == 128);
}

static void median_and_min(void)
{
    double odd[] = {5, 1, 3};
    struct timing t = timing_from_samples(odd, 3);
    CHECK(t.median_ms == 3 && t.min_ms == 1 && t.reps == 3);
    double even[] = {4, 1, 3, 2};
    t = timing_from_samples(even, 4);
    CHECK(t.median_ms == 2.5 && t.min_ms == 1);
}

static void rng_is_reproducible(void)
{
    struct rng a = rng_seeded(42), b = rng_seeded(42), c = rng_seeded(43);
    bool same = true, differs = false, in_range = true;
    for (int i = 0; i < 1000; i++) {
        double x = rng_uniform(&a), y = rng_uniform(&b), z = rng_uniform(&c);
        same = same && x == y;
        differs = differs || x != z;
        in_range = in_range && x >= 0 && x < 1;
    }
    CHECK(same && differs && in_range);
    float v[1000];
    fill_uniform(v, 1000, -1, 1, &a);
    float lo = 1, hi = -1;
    for (int i = 0; i < 1000; i++)
        lo = fminf(lo, v[i]), hi = fmaxf(hi, v[i]);
    CHECK(lo >= -1 && hi < 1 && lo < -0.9f && hi > 0.9f);
}

static const struct unit_case cases[] = {
    {"problem_counts", problem_counts},
    {"presets_match_the_design", presets_match_the_design},
    {"overflow_detection", overflow_detection},
    {"roofline_memory_and_compute_bound", roofline_memory_and_compute_bound},
    {"fp32_peak_lanes", fp32_peak_lanes},
    {"median_and_min", median_and_min},
    {"rng_is_reproducible", rng_is_reproducible},
};

UNIT_MAIN(cases)
