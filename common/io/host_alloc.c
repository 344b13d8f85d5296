/* host_alloc on its own, apart from alloc.c's CUDA side, so that the fuzz targets,
 * which link no CUDA runtime, use this very function (tests/fuzz/fuzz_alloc.c). */
#include "alloc.h"

#include <stdlib.h>

void *host_alloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        exit_out_of_memory("host", what, bytes);
    return p;
}
