/* An op's tensors in one layout, in buffer sets: the one place buffers are made, for a
 * lesson's variants (op_run.c) and for library rows (the convolution's cuDNN rows).
 * Set 0 holds the problem's own data (the op's files when given, else what draw makes
 * of set 0); later sets, drawn from other seeds, let timed runs rotate so that
 * consecutive runs read different memory. A shared tensor (the convolution's weights)
 * is one copy in every set, as a real layer reads one copy of its weights. */
#ifndef OP_BUFFERS_H
#define OP_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "gpu_timer.h"
#include "op.h"
#include "op_files.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the sets are drawn from. */
struct op_source {
    const struct op *op;
    const struct conv_shape *shape;
    const double *param;
    uint64_t seed;
    const struct op_files *files; /* set 0's values when the files were given; NULL: drawn */
};

/* The sets where a variant runs (the device, or the host for CPU variants), and set 0 as
 * drawn (before) and the written tensors after a run (after), on the host. */
struct op_buffers {
    int layout;
    bool host;
    int count;
    struct op_tensor t[OP_MAX_TENSORS];
    int sets;
    void *set[MAX_BUFFER_SETS][OP_MAX_TENSORS];
    void *before[OP_MAX_TENSORS];
    void *after[OP_MAX_TENSORS];
    cudaStream_t stream;
};

/* Bytes each set adds beyond the first (shared tensors are there once). */
size_t op_set_bytes(const struct op *op, const struct conv_shape *s, int layout);
/* Sets to rotate over on a GPU with this L2 and free memory. */
int op_sets_for(const struct op *op, const struct conv_shape *s, int layout,
                const struct gpu_info *gpu);
/* Draws `sets` sets (1..MAX_BUFFER_SETS) of `layout` and copies them where they run;
 * false, with the op's message printed, when the inputs cannot be drawn (b is then
 * still to be freed). Memory it cannot get ends the run (alloc.h). */
bool op_buffers_create(struct op_buffers *b, const struct op_source *src, int layout, bool host,
                       int sets, cudaStream_t stream);
void op_buffers_free(struct op_buffers *b);
/* The written tensors of set 0 back to their drawn values (an op may work in place),
 * queued on the buffers' stream before the run that follows. */
void op_buffers_reset_written(struct op_buffers *b);
/* The written tensors of set 0 to `after`, once the work queued so far is done. */
void op_buffers_fetch_written(struct op_buffers *b);
/* Memory where the buffers live: the host's, or the device's (NULL for no bytes). */
void *op_alloc_where(bool host, size_t bytes, const char *what);
void op_free_where(bool host, void *p);

#ifdef __cplusplus
}
#endif

#endif
