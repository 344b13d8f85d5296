/* Which of the course's kernels runs a convolution: for each dtype and layout, the
 * lessons' fastest variants in order of preference, each with what it needs of the GPU
 * and the build (gpu_needs.h), as the lessons' own variant tables declare them; and
 * earlier steps of the course (lessons 02 and 04), which run only when named. */
#ifndef CONV2D_KERNELS_H
#define CONV2D_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "conv_args.h"
#include "gpu_needs.h"

struct conv2d_kernel {
    const char *name; /* "<lesson>/<variant>", as the lesson's table names it */
    enum dtype dtype;
    enum layout layout;
    struct gpu_needs needs;
    /* NULL when the kernel takes this shape and is the one to take, else why not. */
    const char *(*unsuited)(const struct conv_shape *s);
    /* Optional: bytes of device scratch memory for a->scratch. */
    size_t (*scratch_bytes)(const struct conv_shape *s);
    /* Optional: work before run, on the same inputs (the weights re-laid in scratch). */
    void (*setup)(const struct conv_args *a);
    void (*run)(const struct conv_args *a);
    /* setup copies the filter into __constant__ memory (constant_filter.h). */
    bool constant_filter;
    /* A step of the course that runs only when the caller names it, never as the
     * fastest. */
    bool named_only;
};

/* The kernel for shape s in dtype d and layout l on GPU g (its cc, code_cc and
 * smem_per_block), or NULL with the reason in why. */
const struct conv2d_kernel *conv2d_kernel_for(const struct conv_shape *s, enum dtype d,
                                              enum layout l, const struct gpu_info *g, char *why,
                                              size_t why_size);

/* The kernel called `name`, when it runs shape s in dtype d and layout l on GPU g;
 * else NULL with the reason in why. */
const struct conv2d_kernel *conv2d_kernel_named(const char *name, const struct conv_shape *s,
                                                enum dtype d, enum layout l,
                                                const struct gpu_info *g, char *why,
                                                size_t why_size);

/* The i-th kernel of the table, NULL past the end. */
const struct conv2d_kernel *conv2d_kernel_at(size_t i);

#endif
