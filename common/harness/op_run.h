/* Running a lesson's op (op.h) as its flags ask: the same flags, table, CSV and exit
 * codes for every lesson, whatever its problem. */
#ifndef OP_RUN_H
#define OP_RUN_H

#include "lesson.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The run after parse_options; returns the process exit code: 0 all passed, 1 a check
 * failed or runtime error, 2 usage or input error, 77 no usable GPU. */
int op_run(const struct lesson *lesson, const struct options *opts);

#ifdef __cplusplus
}
#endif

#endif
