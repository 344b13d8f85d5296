/* Lesson 10's op in libconv_torch.so's C ABI (conv_torch_status.h): the covariance of a
 * conv layer's output under weight noise (seed 001), added in place,
 *
 *   out[b,c0,i0,j0,c0,i0',j0'] += c[c0] * S(b, q, q'),
 *   S(b, q, q') = sum_{ci,di,dj} mu[b,ci,i0+di,j0+dj] * mu[b,ci,i0'+di,j0'+dj]
 *                               + gamma[b,ci,i0+di,j0+dj,ci,i0'+di,j0'+dj]
 *
 * with a k x k "valid" window (Ho = h-k+1, Wo = w-k+1) and float32 C-order tensors
 * (lessons/10_covariance/problem.h):
 *
 *   layout 0, the seed's   mu B x Ci x H x W, gamma B x Ci x H x W x Ci x H x W,
 *                          c Co, out B x Co x Ho x Wo x Co x Ho x Wo (only its
 *                          channel-diagonal blocks are written)
 *   layout 1, compact      mu as above, gamma's diagonal blocks B x Ci x H x W x H x W,
 *                          out the factored S, B x Ho x Wo x Ho x Wo (S += the sum: it
 *                          stands for out = c (x) S, so c is not read and may be NULL)
 *
 * The kernels are lesson 10's fastest: channels_summed in the seed's layout,
 * channels_summed_factored in the compact one, or with `symmetric` (compact only; gamma's
 * blocks symmetric in (p, p'), as a covariance is) channels_summed_symmetric, which reads
 * one triangle of each block and mirrors it: on a gamma that is not symmetric it
 * computes something else. */
#ifndef COVARIANCE_H
#define COVARIANCE_H

#include <stddef.h>

#include "conv_torch_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel that runs this problem on `device` ("10_covariance/channels_summed"; a
 * static string) and the bytes of 16-byte aligned device scratch it needs. */
int conv_torch_covariance_plan(int device, int b, int ci, int co, int h, int w, int ksize,
                               int layout, int symmetric, const char **kernel,
                               size_t *scratch_bytes, char *err, size_t err_size);

/* The op on `stream` (a cudaStream_t). mu, gamma, out and scratch 16-byte aligned. */
int conv_torch_covariance(int device, void *stream, const float *mu, const float *gamma,
                          const float *c, float *out, void *scratch, size_t scratch_bytes, int b,
                          int ci, int co, int h, int w, int ksize, int layout, int symmetric,
                          char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
