#include "flag_lesson.h"

#include "conv_flags.h"

static void no_run(const struct op_args *a)
{
    (void)a;
}

/* Never called: the flag parser only asks whether the op can write its result. */
static bool no_write(const struct op *op, int layout, void *const *after, const char **path)
{
    (void)op, (void)layout, (void)after;
    *path = NULL;
    return true;
}

static const struct op_variant variants[] = {
    {.name = "first", .what = "a variant", .run = no_run},
    {.name = "second", .what = "another", .run = no_run},
};

const struct lesson *flag_lesson(void)
{
    static struct op op;
    static const struct lesson lesson = {.name = "99_test",
                                         .title = "flag parsing",
                                         .default_preset = "big3",
                                         .min_compute_capability = 75,
                                         .op = &op};
    if (!op.variants) {
        op = (struct op){
            .variants = variants, .variant_count = 2, .apply_variant = "first", .write = no_write};
        conv_flags_declare(&op);
    }
    return &lesson;
}
