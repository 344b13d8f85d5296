#include "split.h"

#include <stdint.h>

#include "cuda_check.h"
#include "lessons/08_tensor_cores/kernels.h"

#define FP16_BYTES 2
#define NAN_BYTE 0xff /* an fp16 with every bit set is a NaN */

void conv_fastest_fp16(const struct conv_args *a)
{
    int device = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    if (major * 10 + minor == 90 && wgmma_code_cc() == 90 && wgmma_beats_mma(&a->shape))
        launch_conv2d_wgmma_fp16(a);
    else
        launch_conv2d_mma_fp16(a);
}

size_t split_row_bytes(const struct split *s, int rows, int c)
{
    return (size_t)rows * (size_t)s->shape.w * (size_t)c * FP16_BYTES;
}

bool split_slab_busy(const struct slab *p)
{
    return p->n1 > p->n0 && p->r1 > p->r0;
}

static int held_rows(const struct slab *p)
{
    return p->top + (p->r1 - p->r0) + p->bottom;
}

static void *row_of(const struct split *s, const struct slab *p, void *base, int c, int image,
                    int row)
{
    const int held = (image - p->n0) * held_rows(p) + row - (p->r0 - p->top);
    return (char *)base + split_row_bytes(s, held, c);
}

size_t split_image_bytes(const struct split *s, const struct slab *p, int c)
{
    return split_row_bytes(s, held_rows(p), c);
}

void *split_input_row(const struct split *s, const struct slab *p, int image, int row)
{
    return row_of(s, p, p->input, s->shape.cin, image, row);
}

void *split_output_row(const struct split *s, const struct slab *p, int image, int row)
{
    return row_of(s, p, p->output, s->shape.cout, image, row);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* [page: place] */
/* Slab i's images or rows: as even a share as whole images or rows allow. */
static void place(struct split *s, struct slab *p, int i)
{
    const struct conv_shape *sh = &s->shape;
    const long share_lo = i, share_hi = i + 1;
    *p = (struct slab){.n0 = 0, .n1 = sh->n, .r0 = 0, .r1 = sh->h};
    if (s->kind == SPLIT_BATCH) {
        p->n0 = (int)(sh->n * share_lo / s->gpus);
        p->n1 = (int)(sh->n * share_hi / s->gpus);
        return;
    }
    p->r0 = (int)(sh->h * share_lo / s->gpus);
    p->r1 = (int)(sh->h * share_hi / s->gpus);
    if (p->r1 > p->r0) {
        p->top = min_int(s->halo, p->r0);
        p->bottom = min_int(s->halo, sh->h - p->r1);
    }
}
/* [/page: place] */

/* Every GPU of the run reads and writes the others' memory directly (NVLink or PCIe),
 * which collect and the peer-copy exchange use. Enabled once per pair: it lasts as
 * long as the process. */
static bool peer_enabled[SPLIT_MAX_GPUS][SPLIT_MAX_GPUS];

static void enable_peer_access(const struct split *s)
{
    for (int i = 0; i < s->gpus; i++) {
        CUDA_CHECK(cudaSetDevice(s->slab[i].device));
        for (int j = 0; j < s->gpus; j++) {
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, s->slab[i].device, s->slab[j].device));
            if (j == i || !can || peer_enabled[i][j])
                continue;
            CUDA_CHECK(cudaDeviceEnablePeerAccess(s->slab[j].device, 0));
            peer_enabled[i][j] = true;
        }
    }
}

/* Slab p's buffers on its GPU: its own input rows copied from the layer's input on
 * the first GPU (left NaN without one), its halo rows and its output NaN, the weights
 * and the bias copied. */
static void fill_slab(const struct split *s, struct slab *p, const struct conv_args *a)
{
    const struct conv_shape *sh = &s->shape;
    const int images = p->n1 - p->n0, own = p->r1 - p->r0;
    const size_t in_bytes = (size_t)images * split_row_bytes(s, held_rows(p), sh->cin);
    const size_t out_bytes = (size_t)images * split_row_bytes(s, held_rows(p), sh->cout);
    const size_t w_bytes = (size_t)sh->cout * sh->ksize * sh->ksize * sh->cin * FP16_BYTES;
    CUDA_CHECK(cudaSetDevice(p->device));
    CUDA_CHECK(cudaMalloc(&p->input, in_bytes));
    CUDA_CHECK(cudaMalloc(&p->output, out_bytes));
    CUDA_CHECK(cudaMalloc(&p->weights, w_bytes));
    CUDA_CHECK(cudaMemset(p->input, NAN_BYTE, in_bytes));
    CUDA_CHECK(cudaMemset(p->output, NAN_BYTE, out_bytes));
    CUDA_CHECK(cudaMemcpyPeer(p->weights, p->device, a->weights, a->device, w_bytes));
    if (sh->bias) {
        CUDA_CHECK(cudaMalloc((void **)&p->bias, (size_t)sh->cout * sizeof(float)));
        CUDA_CHECK(cudaMemcpyPeer(p->bias, p->device, a->bias, a->device,
                                  (size_t)sh->cout * sizeof(float)));
    }
    for (int n = p->n0; a->input && n < p->n1; n++) {
        const char *from = (const char *)a->input +
                           split_row_bytes(s, n * sh->h + p->r0, sh->cin);
        CUDA_CHECK(cudaMemcpyPeer(split_input_row(s, p, n, p->r0), p->device, from, a->device,
                                  split_row_bytes(s, own, sh->cin)));
    }
}

/* One process drives every GPU: one communicator per GPU, made together in one group.
 * On Hopper NCCL launches its kernel in clusters of blocks by default, which must find
 * that many free SMs in one GPC at once: beside a persistent kernel that leaves a few
 * SMs free (rows_overlap), a cluster may never fit until that kernel ends. Clusters of
 * one block fit any free SM. */
/* [page: communicators] */
static void open_communicators(struct split *s, const int *devices)
{
    ncclUniqueId id;
    NCCL_CHECK(ncclGetUniqueId(&id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.cgaClusterSize = 1;
    NCCL_CHECK(ncclGroupStart());
    for (int i = 0; i < s->gpus; i++) {
        CUDA_CHECK(cudaSetDevice(devices[i]));
        NCCL_CHECK(ncclCommInitRankConfig(&s->comm[i], s->gpus, id, i, &config));
    }
    NCCL_CHECK(ncclGroupEnd());
}
/* [/page: communicators] */

void split_open(struct split *s, const struct conv_args *a, enum split_kind kind, bool nccl)
{
    *s = (struct split){.kind = kind, .shape = a->shape, .gpus = a->gpus,
                        .halo = a->shape.ksize / 2, .nccl = nccl};
    /* The harness's uploads are on its stream: wait for them before copying. */
    CUDA_CHECK(cudaStreamSynchronize(a->stream));
    int devices[SPLIT_MAX_GPUS];
    for (int i = 0; i < s->gpus; i++) {
        place(s, &s->slab[i], i);
        s->slab[i].device = devices[i] = a->device + i;
    }
    enable_peer_access(s);
    for (int i = 0; i < s->gpus; i++) {
        struct slab *p = &s->slab[i];
        if (split_slab_busy(p))
            fill_slab(s, p, a);
        CUDA_CHECK(cudaSetDevice(p->device));
        int least = 0, greatest = 0;
        CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
        CUDA_CHECK(cudaStreamCreateWithPriority(&p->stream, cudaStreamNonBlocking, least));
        CUDA_CHECK(cudaStreamCreateWithPriority(&p->comm, cudaStreamNonBlocking, greatest));
        CUDA_CHECK(cudaEventCreateWithFlags(&p->interior, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&p->bands, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    if (nccl)
        open_communicators(s, devices);
    CUDA_CHECK(cudaSetDevice(a->device));
    CUDA_CHECK(cudaEventCreateWithFlags(&s->start, cudaEventDisableTiming));
}

void split_close(struct split *s)
{
    for (int i = 0; i < s->gpus; i++) {
        struct slab *p = &s->slab[i];
        if (s->nccl)
            NCCL_CHECK(ncclCommDestroy(s->comm[i]));
        CUDA_CHECK(cudaSetDevice(p->device));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaFree(p->input));
        CUDA_CHECK(cudaFree(p->output));
        CUDA_CHECK(cudaFree(p->weights));
        CUDA_CHECK(cudaFree(p->bias));
        CUDA_CHECK(cudaStreamDestroy(p->stream));
        CUDA_CHECK(cudaStreamDestroy(p->comm));
        CUDA_CHECK(cudaEventDestroy(p->interior));
        CUDA_CHECK(cudaEventDestroy(p->bands));
        CUDA_CHECK(cudaEventDestroy(p->done));
    }
    CUDA_CHECK(cudaSetDevice(s->slab[0].device));
    CUDA_CHECK(cudaEventDestroy(s->start));
}

/* [page: fences] */
void split_fence_in(struct split *s, cudaStream_t harness)
{
    CUDA_CHECK(cudaEventRecord(s->start, harness));
    for (int i = 0; i < s->gpus; i++) {
        CUDA_CHECK(cudaStreamWaitEvent(s->slab[i].stream, s->start, 0));
        CUDA_CHECK(cudaStreamWaitEvent(s->slab[i].comm, s->start, 0));
    }
}

void split_fence_out(struct split *s, cudaStream_t harness)
{
    for (int i = 0; i < s->gpus; i++) {
        struct slab *p = &s->slab[i];
        CUDA_CHECK(cudaSetDevice(p->device));
        CUDA_CHECK(cudaEventRecord(p->done, p->stream));
        CUDA_CHECK(cudaStreamWaitEvent(harness, p->done, 0));
    }
    CUDA_CHECK(cudaSetDevice(s->slab[0].device));
}
/* [/page: fences] */

void split_compute(const struct split *s, const struct slab *p, int images, int rows,
                   const void *from, void *to, cudaStream_t stream, int sms)
{
    struct conv_args c = {.shape = s->shape,
                          .weights = p->weights,
                          .bias = p->bias,
                          .stream = stream,
                          .device = p->device,
                          .gpus = 1,
                          .sms = sms};
    c.shape.h = rows;
    /* The kernels index a tensor with 32-bit integers: a block of more elements goes in
     * launches of as many whole images as stay below 2^31 (one image must). */
    const int channels = s->shape.cin > s->shape.cout ? s->shape.cin : s->shape.cout;
    const size_t image = (size_t)rows * (size_t)s->shape.w * (size_t)channels;
    const int per_launch = image == 0 || image > INT32_MAX ? 1 : (int)(INT32_MAX / image);
    CUDA_CHECK(cudaSetDevice(p->device));
    for (int n = 0; n < images; n += c.shape.n) {
        c.shape.n = images - n < per_launch ? images - n : per_launch;
        c.input = (const char *)from + (size_t)n * split_row_bytes(s, rows, s->shape.cin);
        c.output = (char *)to + (size_t)n * split_row_bytes(s, rows, s->shape.cout);
        conv_fastest_fp16(&c);
    }
}

void split_compute_slab(const struct split *s, const struct slab *p, int sms)
{
    split_compute(s, p, p->n1 - p->n0, held_rows(p), p->input, p->output, p->stream, sms);
}

/* [page: halo_pieces] */
void split_for_each_halo_piece(const struct split *s, halo_piece_fn piece, void *context)
{
    for (int to = 0; to < s->gpus; to++) {
        const struct slab *t = &s->slab[to];
        if (!split_slab_busy(t))
            continue;
        const int need[2][2] = {{t->r0 - t->top, t->r0}, {t->r1, t->r1 + t->bottom}};
        for (int side = 0; side < 2; side++)
            for (int from = 0; from < s->gpus; from++) {
                const struct slab *f = &s->slab[from];
                const int lo = need[side][0] > f->r0 ? need[side][0] : f->r0;
                const int hi = need[side][1] < f->r1 ? need[side][1] : f->r1;
                for (int n = 0; from != to && lo < hi && n < s->shape.n; n++)
                    piece(s, from, to, n, lo, hi - lo, context);
            }
    }
}
/* [/page: halo_pieces] */

void split_collect(const struct split *s, const struct conv_args *a)
{
    const struct conv_shape *sh = &s->shape;
    for (int i = 0; i < s->gpus; i++) {
        const struct slab *p = &s->slab[i];
        for (int n = p->n0; split_slab_busy(p) && n < p->n1; n++) {
            char *to = (char *)a->output + split_row_bytes(s, n * sh->h + p->r0, sh->cout);
            CUDA_CHECK(cudaMemcpyPeerAsync(to, a->device, split_output_row(s, p, n, p->r0),
                                           p->device, split_row_bytes(s, p->r1 - p->r0, sh->cout),
                                           a->stream));
        }
    }
}

struct split the_split;

void setup_batch(const struct conv_args *a)
{
    split_open(&the_split, a, SPLIT_BATCH, false);
}

void setup_rows(const struct conv_args *a)
{
    split_open(&the_split, a, SPLIT_ROWS, false);
}

void setup_rows_nccl(const struct conv_args *a)
{
    split_open(&the_split, a, SPLIT_ROWS, true);
}

void collect_split(const struct conv_args *a)
{
    split_collect(&the_split, a);
}

void teardown_split(const struct conv_args *a)
{
    (void)a;
    split_close(&the_split);
}
