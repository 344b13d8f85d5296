/* Every lesson's main(): the flags, the op's problem, and the op run by the harness. */
#include "lesson.h"

#include "cli.h"
#include "op_run.h"
#include "session.h"

static int run_lesson(const struct lesson *lesson, int argc, char **argv)
{
    struct options opts;
    switch (parse_options(lesson, argc, argv, &opts)) {
    case CLI_EXIT_OK: return EXIT_PASS;
    case CLI_EXIT_USAGE: return EXIT_USAGE;
    case CLI_RUN: break;
    }
    const struct op *op = lesson->op;
    const int rc = op->prepare ? op->prepare(op, &opts) : EXIT_PASS;
    return rc != EXIT_PASS ? rc : op_run(lesson, &opts);
}

int lesson_main(const struct lesson *lesson, int argc, char **argv)
{
    const int rc = run_lesson(lesson, argc, argv);
    if (lesson->op->release)
        lesson->op->release(lesson->op);
    return rc;
}
