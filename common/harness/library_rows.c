#include "library_rows.h"

#include <math.h>

static int find_row(const struct library_rows *l, const struct op_baseline *b)
{
    for (int i = 0; i < l->count; i++)
        if (l->row[i].dtype == b->dtype && l->row[i].id == b->id)
            return i;
    return -1;
}

void library_rows_add(struct library_rows *l, const struct op *op, const struct op_variant *v)
{
    struct op_baseline list[OP_MAX_BASELINES];
    for (int j = 0, n = op->baselines(op, v, list); j < n; j++)
        if (find_row(l, &list[j]) < 0 && l->count < OP_MAX_BASELINES) {
            l->ms[l->count] = NAN;
            l->row[l->count++] = list[j];
        }
}

double library_rows_fastest(const struct library_rows *l, const struct op *op,
                            const struct op_variant *v)
{
    struct op_baseline list[OP_MAX_BASELINES];
    double best = NAN;
    for (int j = 0, n = op->baselines ? op->baselines(op, v, list) : 0; j < n; j++) {
        const int k = find_row(l, &list[j]);
        if (k >= 0 && !isnan(l->ms[k]) && !(l->ms[k] >= best))
            best = l->ms[k];
    }
    return best;
}
