/* One convolution layer spread over the GPUs of one host: each GPU holds a slab of
 * the layer's input and output (whole images, or a band of rows of every image with
 * the halo rows its filter reaches into) and computes it with lesson 08's fastest
 * fp16 NHWC kernel. The layer's tensors start and end on the run's first GPU, where
 * the harness draws and checks them: setup scatters them (untimed), a run computes
 * the slabs where they lie, collect gathers the output (untimed). */
#ifndef SPLIT_H
#define SPLIT_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "conv_args.h"
#include "nccl_check.h"

#define SPLIT_MAX_GPUS 16

enum split_kind { SPLIT_BATCH, SPLIT_ROWS };

/* One GPU's share. */
struct slab {
    int device;
    int n0, n1;       /* its images: [n0, n1) (a batch split; all of them by rows) */
    int r0, r1;       /* its rows of every image: [r0, r1) (all of them by batch) */
    int top, bottom;  /* halo rows it holds above r0 and below r1 */
    void *input;      /* (n1 - n0) images of top + (r1 - r0) + bottom rows, NHWC fp16 */
    void *output;     /* the same rows, cout channels; rows [top, top + r1 - r0) are its */
    void *weights;    /* a copy of the layer's weights (KRSC fp16) and bias (fp32) */
    float *bias;
    cudaStream_t stream;  /* the compute */
    cudaStream_t comm;    /* the exchange, at high priority (rows_overlap) */
    cudaEvent_t interior, bands, done;
};

struct split {
    enum split_kind kind;
    struct conv_shape shape;
    int gpus;
    int halo; /* ksize / 2: rows above and below an output row that it reads */
    struct slab slab[SPLIT_MAX_GPUS];
    ncclComm_t comm[SPLIT_MAX_GPUS]; /* rank i drives slab i's GPU; NULL without NCCL */
    bool nccl;
    cudaEvent_t start; /* on the first GPU: when the harness's stream reached the run */
};

/* The layer on a's GPUs: slabs placed, a's tensors scattered to them, halo rows left
 * as NaN until an exchange fills them; with nccl, a communicator per GPU. Without
 * a->input (a layer too large for the first GPU) the slabs' own rows are left NaN too,
 * for the caller to draw where they lie. */
void split_open(struct split *s, const struct conv_args *a, enum split_kind kind, bool nccl);
void split_close(struct split *s);

/* Every GPU's streams start after what a->stream holds, and a->stream goes on after
 * every GPU is done, so the harness's events on a->stream time the whole layer. */
void split_fence_in(struct split *s, cudaStream_t harness);
void split_fence_out(struct split *s, cudaStream_t harness);

/* The kernel on `images` images of `rows` rows each, contiguous at `from` (cin
 * channels), written at `to` (cout channels), on slab p's GPU with its weights, on
 * stream, in as many launches as 32-bit indexing needs (an image of 2^31 elements or
 * more is beyond it), a persistent kernel on at most `sms` SMs (0: all of them). Each
 * image's first and last rows are padded as the image's edges are: only the output
 * rows whose filter reach stays inside them (or meets the image's own edge) are right. */
void split_compute(const struct split *s, const struct slab *p, int images, int rows,
                   const void *from, void *to, cudaStream_t stream, int sms);
/* Slab p's images whole on its stream: a batch split's share, or a row slab with its
 * halo rows, whose rows [top, top + r1 - r0) come out right. */
void split_compute_slab(const struct split *s, const struct slab *p, int sms);

/* Where row `row` (absolute) of image `image` (of the layer) lies in slab p's input or
 * output. */
void *split_input_row(const struct split *s, const struct slab *p, int image, int row);
void *split_output_row(const struct split *s, const struct slab *p, int image, int row);

/* The halo rows each GPU needs, from the GPUs that own them, through NCCL's grouped
 * send and receive: on each slab's comm stream when `comm`, else its compute stream
 * (2_rows_blocking.c). */
void split_exchange_nccl(const struct split *s, bool comm);

/* Called for each piece of a halo: rows [row, row + rows) (absolute) of image `image`,
 * which slab `from` owns and slab `to` holds as halo. */
typedef void (*halo_piece_fn)(const struct split *s, int from, int to, int image, int row,
                              int rows, void *context);
void split_for_each_halo_piece(const struct split *s, halo_piece_fn piece, void *context);

/* The output rows (or images) of every slab copied to a->output on the first GPU. */
void split_collect(const struct split *s, const struct conv_args *a);

/* Bytes of `rows` rows of one image with c channels. */
size_t split_row_bytes(const struct split *s, int rows, int c);
/* Bytes from one image to the next in slab p's input (c = cin) or output (c = cout). */
size_t split_image_bytes(const struct split *s, const struct slab *p, int c);

/* Whether slab p has work: images and rows. */
bool split_slab_busy(const struct slab *p);

/* The split of the variant that runs (one at a time), and the variants' untimed
 * callbacks around its runs: setup by batch, by rows, by rows with NCCL's
 * communicators; collect; teardown. */
extern struct split the_split;
conv_launcher setup_batch, setup_rows, setup_rows_nccl, collect_split, teardown_split;

/* The course's fastest fp16 NHWC kernel on the current GPU for the layer: lesson 08's
 * wgmma where the build has its sm_90a code, the GPU is 9.0 and lesson 08 finds it the
 * faster (wgmma_beats_mma), else its mma.sync. */
conv_launcher conv_fastest_fp16;

#endif
