/* The C ABI of lesson 10's op (covariance.h): every argument checked before any GPU
 * work, since the launchers exit the process on a CUDA error (cuda_check.h). */
#include "covariance.h"

#include <stdint.h>

#include "abi_status.h"
#include "lessons/10_covariance/kernels.h"
#include "query_gpu.h"

#define COV_SEED_LAYOUT 0
#define COV_COMPACT_LAYOUT 1
/* The lesson's minimum. */
#define COV_CC 75

struct cov_kernel {
    const char *name;
    enum cov_layout layout; /* of the output, as the lesson's variant declares it */
};

static const struct cov_kernel seed_kernel = {"10_covariance/channels_summed", COV_FULL};
static const struct cov_kernel factored_kernel = {"10_covariance/channels_summed_factored",
                                                  COV_FACTORED};
static const struct cov_kernel symmetric_kernel = {"10_covariance/channels_summed_symmetric",
                                                   COV_FACTORED};

/* The window and sizes as the lesson's flags and files take them (--ksize odd, the seed's
 * .npy files: lessons/10_covariance/problem.h). */
static int check_problem(const struct conv_shape *s, int layout, int symmetric, char *err,
                         size_t err_size)
{
    if (s->n < 1 || s->cin < 1 || s->cout < 1 || s->h < 1 || s->w < 1)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "sizes b=%d ci=%d co=%d h=%d w=%d: each at least 1", s->n, s->cin, s->cout,
                        s->h, s->w);
    if (s->ksize < 1 || s->ksize > MAX_KSIZE || s->ksize % 2 == 0)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "ksize %d: an odd window from 1 to %d", s->ksize, MAX_KSIZE);
    if (s->ksize > s->h || s->ksize > s->w)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "a %dx%d window on a %dx%d image: a valid covariance has no output",
                        s->ksize, s->ksize, s->h, s->w);
    if (layout != COV_SEED_LAYOUT && layout != COV_COMPACT_LAYOUT)
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "layout %d: 0 the seed's or 1 compact", layout);
    if (symmetric && layout == COV_SEED_LAYOUT)
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                        "the symmetric kernel writes the compact layout only");
    /* The largest tensor, in doubles so that the test cannot overflow (cov_shape_problem). */
    const double p = (double)s->h * s->w;
    const double widest = s->cin > s->cout ? s->cin : s->cout;
    if ((double)s->n * widest * widest * p * p * sizeof(float) > (double)SIZE_MAX / 2)
        return abi_fail(CONV_TORCH_UNSUPPORTED, err, err_size,
                        "the seed's 7-D tensors of this size would not fit in the address space");
    return CONV_TORCH_OK;
}

static int plan(int device, const struct conv_shape *s, int layout, int symmetric,
                const struct cov_kernel **k, char *err, size_t err_size)
{
    const int status = check_problem(s, layout, symmetric, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    *k = layout == COV_SEED_LAYOUT ? &seed_kernel
         : symmetric               ? &symmetric_kernel
                                   : &factored_kernel;
    const struct gpu_needs needs = {.cc = COV_CC};
    return check_gpu_runs(device, (*k)->name, &needs, s, err, err_size);
}

int conv_torch_covariance_plan(int device, int b, int ci, int co, int h, int w, int ksize,
                               int layout, int symmetric, const char **kernel,
                               size_t *scratch_bytes, char *err, size_t err_size)
{
    const struct conv_shape s = {b, ci, co, h, w, ksize, false};
    const struct cov_kernel *k;
    const int status = plan(device, &s, layout, symmetric, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    *kernel = k->name;
    *scratch_bytes = covariance_channels_summed_scratch(&s);
    return CONV_TORCH_OK;
}

/* The kernels read and write whole float4s where a row's length allows. */
static int check_pointers(const float *mu, const float *gamma, const float *c, const float *out,
                          int layout, char *err, size_t err_size)
{
    if (!mu || !gamma || !out || (layout == COV_SEED_LAYOUT && !c))
        return abi_fail(CONV_TORCH_BAD_ARGUMENT, err, err_size,
                        "a NULL mu, gamma or out, or a NULL c in the seed's layout");
    const void *const float4s[] = {mu, gamma, out};
    return abi_check_float4_aligned(float4s, sizeof float4s / sizeof *float4s, "mu, gamma and out",
                                    c, "c", err, err_size);
}

int conv_torch_covariance(int device, void *stream, const float *mu, const float *gamma,
                          const float *c, float *out, void *scratch, size_t scratch_bytes, int b,
                          int ci, int co, int h, int w, int ksize, int layout, int symmetric,
                          char *err, size_t err_size)
{
    const struct conv_shape s = {b, ci, co, h, w, ksize, false};
    const struct cov_kernel *k;
    int status = check_pointers(mu, gamma, c, out, layout, err, err_size);
    if (status == CONV_TORCH_OK)
        status = plan(device, &s, layout, symmetric, &k, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    status = abi_check_memory(k->name, "scratch", covariance_channels_summed_scratch(&s), scratch,
                              scratch_bytes, err, err_size);
    if (status != CONV_TORCH_OK)
        return status;
    if ((status = abi_check_earlier_cuda_error(err, err_size)) != CONV_TORCH_OK)
        return status;
    const struct cov_args a = {.shape = s,
                               .mu = mu,
                               .gamma = gamma,
                               .c = c,
                               .out = out,
                               .scratch = scratch,
                               .stream = (cudaStream_t)stream};
    if (k == &symmetric_kernel)
        covariance_channels_summed_symmetric(&a);
    else
        covariance_channels_summed(&a, k->layout);
    return CONV_TORCH_OK;
}
