/* The GPU launchers of lesson 10, one file per idea. Each enqueues its kernels on
 * a->stream and adds the op's result into a->out in place; every pointer is a device
 * pointer, in the layouts the launcher's comment names (problem.h). */
#ifndef KERNELS_H
#define KERNELS_H

#include <cuda_runtime_api.h>

#include "problem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cov_args {
    struct conv_shape shape; /* n = B, cin = Ci, cout = Co, h x w, ksize = k */
    const float *mu;         /* B x Ci x H x W */
    const float *gamma;      /* full 7-D or diagonal blocks, as the variant says */
    const float *c;          /* Co (not read by the factored variants) */
    float *out;              /* full 7-D, blocks or factored, as the variant says */
    void *scratch;           /* the variant's working memory (the harness owns it), or NULL */
    cudaStream_t stream;
};

/* 2_seed_port.cu: the seed's last Numba kernel in CUDA C. One thread per batch element
 * loops over every output pair, window tap and channel. gamma and out in the full 7-D
 * layouts (COV_FULL). */
void covariance_seed_port(const struct cov_args *a);
/* Serial inner iterations of one seed_port thread, Q^2 * Ci * k^2: its run time is
 * this count times one iteration's latency, so the harness can refuse the variant on
 * problems where a run would take minutes. */
double covariance_seed_port_iterations(const struct conv_shape *s);

/* 3_thread_per_output.cu: one thread per (b, q, q'), consecutive threads along q';
 * gamma diagonal, out blocks (COV_BLOCKS). */
void covariance_thread_per_output(const struct cov_args *a);

/* 4_shared_box.cu: per spatial lag, the k x k window sum as a box filter: the gamma
 * rows of a tile staged in shared memory, summed along j (dj), then over a ring of k
 * rows (di). gamma diagonal, out blocks (COV_BLOCKS). */
void covariance_shared_box(const struct cov_args *a);

/* 5_factored.cu: the same box filter writing S once (B x Q x Q, COV_FACTORED) instead
 * of c[c0]*S into Co blocks. The symmetric twin computes only the lags with
 * i0' >= i0, so it reads only the upper triangle p <= p' of each gamma block, and
 * adds each result at (q, q') and (q', q); it needs a symmetric gamma
 * (cov_symmetrize_gamma). */
void covariance_factored(const struct cov_args *a);
void covariance_factored_symmetric(const struct cov_args *a);

/* 6_channels_summed.cu: the channel sum first (G = sum_ci of gamma's blocks and the mu
 * products, B x P x P floats in a->scratch, covariance_channels_summed_scratch bytes),
 * then a k x k box sum of G per output, added into `layout`: COV_FULL (the seed's 7-D
 * tensors, gamma full too), COV_BLOCKS or COV_FACTORED (gamma diagonal). */
size_t covariance_channels_summed_scratch(const struct conv_shape *s);
void covariance_channels_summed(const struct cov_args *a, enum cov_layout layout);

/* 7_channels_summed_symmetric.cu: channels_summed into COV_FACTORED, computing G on and
 * above its diagonal only (about half the gamma reads) and mirroring it: G is
 * symmetric when gamma is (cov_symmetrize_gamma). The same scratch. */
void covariance_channels_summed_symmetric(const struct cov_args *a);

#ifdef __cplusplus
}
#endif

#endif
