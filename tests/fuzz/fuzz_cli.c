/* libFuzzer target for the flag parser: any command line must give a problem
 * within the ranges --help states, --help or --list-presets, or exactly one error
 * line; never a crash, leak or undefined behaviour. The input is the arguments,
 * each ended by a NUL byte, as the kernel hands them to main(). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "conv_flags.h"
#include "flag_lesson.h"
#include "fuzz_command_line.h"
#include "fuzz_support.h"

static void check_options(const struct options *o)
{
    fuzz_require(o->reps >= 1 && o->reps <= MAX_REPS);
    fuzz_require(o->warmup >= 0 && o->warmup <= MAX_REPS);
    fuzz_require(o->preset != NULL);
    bool known = o->variant == NULL;
    const struct op *op = flag_lesson()->op;
    for (int i = 0; i < op->variant_count; i++)
        known = known || strcmp(o->variant, op->variants[i].name) == 0;
    fuzz_require(known);
    const struct conv_shape *s = &o->shape;
    const char *const *d = o->data;
    switch (o->mode) {
    case MODE_FILES: /* the flag lesson has no file sets */
        fuzz_require(false);
        return;
    case MODE_DATA: /* the files or the image set the problem later */
        if (d[DATA_INPUT]) {
            fuzz_require(d[DATA_WEIGHTS] && !d[DATA_IMAGE] && s->ksize == 0);
            return;
        }
        fuzz_require(d[DATA_IMAGE] && d[DATA_OUT]);
        if (s->ksize == 0) /* the op's default */
            return;
        break;
    case MODE_BENCH:
        fuzz_require(s->n >= 1 && s->cin >= 1 && s->cout >= 1 && s->h >= 1 && s->w >= 1);
        fuzz_require(!shape_overflows_int32(s));
        break;
    }
    fuzz_require(s->ksize >= 1 && s->ksize <= MAX_KSIZE && s->ksize % 2 == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_command_line(flag_lesson(), data, size, check_options);
    return 0;
}
