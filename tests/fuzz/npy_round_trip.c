#include "npy_round_trip.h"

#include <string.h>

#include "fuzz_support.h"

#define ERR_SIZE 512

void fuzz_npy_round_trip(const struct npy_array *a, const char *stem)
{
    char err[ERR_SIZE];
    struct npy_array b;
    const char *out = fuzz_output_path(stem, ".npy");
    fuzz_require(npy_write(out, a->data, a->ndim, a->shape, err, sizeof err));
    fuzz_require(npy_read(out, &b, err, sizeof err));
    fuzz_require(a->ndim == b.ndim && a->count == b.count);
    fuzz_require(memcmp(a->shape, b.shape, sizeof a->shape[0] * (size_t)a->ndim) == 0);
    fuzz_require(a->count == 0 || memcmp(a->data, b.data, a->count * sizeof(float)) == 0);
    npy_free(&b);
}
