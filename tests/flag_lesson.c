#include "flag_lesson.h"

static void no_run(const struct conv_args *a)
{
    (void)a;
}

static const struct conv_variant variants[] = {
    {.name = "first", .what = "a variant", .run = no_run},
    {.name = "second", .what = "another", .run = no_run},
};

const struct lesson flag_lesson = {.name = "99_test",
                                   .title = "flag parsing",
                                   .target = TARGET_GPU,
                                   .variants = variants,
                                   .variant_count = 2,
                                   .default_preset = "big3",
                                   .image_variant = "first",
                                   .min_compute_capability = 75};
