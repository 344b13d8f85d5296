/* Every lesson's main(): the flags, then its op run by the harness (op_run.h): the
 * lesson's own op, or the convolution built from its variants (conv_op.h). */
#include "lesson.h"

#include "cli.h"
#include "conv_op.h"
#include "op_run.h"
#include "session.h"

int lesson_main(const struct lesson *lesson, int argc, char **argv)
{
    struct options opts;
    switch (parse_options(lesson, argc, argv, &opts)) {
    case CLI_EXIT_OK: return EXIT_PASS;
    case CLI_EXIT_USAGE: return EXIT_USAGE;
    case CLI_RUN: break;
    }
    if (lesson->op)
        return op_run(lesson, lesson->op, &opts);
    const struct op *conv = conv_op_create(lesson, &opts);
    if (!conv)
        return EXIT_USAGE;
    const int rc = op_run(lesson, conv, &opts);
    conv_op_free(conv);
    return rc;
}
