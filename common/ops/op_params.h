/* An op's own flags (op.params) in --help: one line each, with its range and default. */
#ifndef OP_PARAMS_H
#define OP_PARAMS_H

#include "op.h"

void op_print_param_help(const struct op *op);

#endif
