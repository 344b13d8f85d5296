/* Every lesson's main(): the flags, the op's problem, and the op run by the harness. */
#include "lesson.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "escape.h"
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

/* The table, the help and "wrote FILE" went to standard output: a write that failed
 * there (a full disk, a closed pipe with SIGPIPE ignored) fails the run, not only a
 * file that could not be written. rc is kept when the run stopped on bad usage (2) or
 * without a GPU (77): its one line already says why. */
static int check_stdout(int rc)
{
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    const int flush_errno = errno;
    if (flushed && !ferror(stdout))
        return rc;
    if (rc != EXIT_PASS && rc != EXIT_FAIL)
        return rc;
    if (!flushed && flush_errno)
        print_error("standard output: cannot write: %s", strerror(flush_errno));
    else
        print_error("standard output: a write failed: part of the output is missing");
    return EXIT_FAIL;
}

int lesson_main(const struct lesson *lesson, int argc, char **argv)
{
    const int rc = run_lesson(lesson, argc, argv);
    if (lesson->op->release)
        lesson->op->release(lesson->op);
    return check_stdout(rc);
}
