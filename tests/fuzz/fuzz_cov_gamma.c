/* libFuzzer target for lesson 10's gamma files (lessons/10_covariance/problem.h): the
 * strict .npy reader on 7-D (the seed's layout) and 6-D (the compact one) arrays, and the
 * reader of their diagonal blocks that decides, before any work, whether the symmetric
 * variants can run (cov_gamma_file_asymmetry). Any bytes must give an array or one error
 * line, never a crash, leak or undefined behaviour; the header reader must agree with
 * the full one; the diagonal blocks, read block by block at their offsets, must give the
 * first asymmetric pair the whole array gives; a 7-D or 6-D array must survive a write
 * and a second read unchanged. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "npy.h"
#include "npy_round_trip.h"
#include "problem.h"

#define ERR_SIZE 512

/* The problem a gamma of this shape belongs to (its B, Ci, H, W; one output channel and
 * a 1x1 window, which the blocks do not depend on); false when the shape is no gamma's:
 * (B, Ci, H, W, Ci, H, W) or (B, Ci, H, W, H, W). */
static bool gamma_shape(int ndim, const size_t *d, struct conv_shape *s)
{
    const bool seed = ndim == 7 && d[4] == d[1] && d[5] == d[2] && d[6] == d[3];
    const bool compact = ndim == 6 && d[4] == d[2] && d[5] == d[3];
    if (!seed && !compact)
        return false;
    *s = (struct conv_shape){.n = (int)d[0], .cin = (int)d[1], .cout = 1, .h = (int)d[2],
                             .w = (int)d[3], .ksize = 1};
    return true;
}

static bool same_pair(const struct cov_asymmetry *a, const struct cov_asymmetry *b)
{
    if (a->found != b->found)
        return false;
    return !a->found || (a->b == b->b && a->ci == b->ci && a->i == b->i && a->j == b->j &&
                         a->i2 == b->i2 && a->j2 == b->j2 &&
                         memcmp(&a->value, &b->value, sizeof a->value) == 0 &&
                         memcmp(&a->mirror, &b->mirror, sizeof a->mirror) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_SIZE];
    const char *in = fuzz_input_file(data, size, "cov_gamma", ".npy");
    int ndim = -1;
    size_t shape[NPY_MAX_DIMS];
    const bool header = npy_read_shape(in, &ndim, shape, err, sizeof err);
    fuzz_require(header || strchr(err, '\n') == NULL);
    struct npy_array a;
    const bool read = npy_read(in, &a, err, sizeof err);
    fuzz_require(!read || header); /* the full read passes only what the header read does */
    struct conv_shape s;
    struct cov_asymmetry scanned;
    const bool scan = cov_gamma_file_asymmetry(in, &scanned);
    fuzz_require(scan == (header && gamma_shape(ndim, shape, &s)));
    fuzz_require(scan || !scanned.found);
    if (!read) {
        fuzz_require(strchr(err, '\n') == NULL && a.data == NULL);
        return 0;
    }
    fuzz_require(a.ndim == ndim && memcmp(a.shape, shape, sizeof shape[0] * (size_t)ndim) == 0);
    if (scan && a.count > 0) {
        fuzz_require(scanned.rank == ndim);
        /* The whole array's diagonal blocks, gathered as the op gathers them. */
        float *blocks = a.data;
        if (ndim == 7) {
            blocks = malloc(cov_gamma_diag_count(&s) * sizeof *blocks);
            fuzz_require(blocks != NULL);
            cov_gather_gamma(&s, a.data, blocks);
        }
        struct cov_asymmetry whole = cov_find_asymmetry(&s, blocks);
        whole.rank = ndim;
        fuzz_require(same_pair(&scanned, &whole));
        if (blocks != a.data)
            free(blocks);
    }
    if (scan)
        fuzz_npy_round_trip(&a, "cov_gamma");
    npy_free(&a);
    return 0;
}
