#include "op_params.h"

#include <stdio.h>

void op_print_param_help(const struct op *op)
{
    for (int i = 0; i < op->param_count; i++) {
        const struct op_param *p = &op->params[i];
        char flag[64];
        snprintf(flag, sizeof flag, "--%s X", p->flag);
        printf("  %-18s %s, %g..%g (default %g)\n", flag, p->help, p->lo, p->hi, p->fallback);
    }
}
