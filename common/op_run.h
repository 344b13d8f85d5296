/* lesson_main for a lesson whose problem is an op (lesson.op): the same flags, table,
 * CSV and exit codes as the convolution's lessons. */
#ifndef OP_RUN_H
#define OP_RUN_H

#include "lesson.h"

int op_main(const struct lesson *lesson, int argc, char **argv);

#endif
