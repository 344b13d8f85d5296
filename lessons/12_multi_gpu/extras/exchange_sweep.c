/* exchange_sweep: what it costs to move bytes between two GPUs of this host, the figures
 * lesson 12's halo exchange is built on. For every ordered pair of the run's GPUs and
 * every message size from 4 KB up, one message from the first to the second, timed
 * two ways: NCCL's ncclSend/ncclRecv in one group (what the lesson's rows_* variants
 * do), and the runtime's cudaMemcpyPeerAsync (its peer_copy). Each time is the median
 * of --reps transfers after warm-up ones, between two events on the sending GPU (the
 * receiver's end is joined back to the sender's stream), and the first NCCL exchange
 * of each pair, connection set-up included, is shown apart. After the timed transfers
 * of each size, the receiver's copy is compared with what was sent: a transfer that
 * moved the wrong bytes fails the run (exit 1).
 *
 *   build/bin/exchange_sweep [--gpus N] [--reps R] [--max-bytes B]
 *
 * Exit codes: 0 done; 1 a CUDA or NCCL error, or bytes that arrived wrong; 2 bad usage;
 * 77 fewer than two GPUs. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_check.h"
#include "escape.h"
#include "gpu_info.h"
#include "int_flags.h"
#include "nccl_check.h"
#include "several_gpus.h"
#include "timing.h"

#define MAX_GPUS 16
#define MIN_BYTES ((size_t)4 << 10)
#define DEFAULT_MAX_BYTES ((size_t)64 << 20)
#define SIZE_STEP 4 /* each message size is 4x the one before */
#define DEFAULT_REPS 20
#define WARMUP 3
#define PATTERN_BASE 0x40 /* the byte GPU i sends is PATTERN_BASE + i */

struct gpu {
    int device;
    cudaStream_t stream;
    cudaEvent_t start, stop, received;
    void *send, *receive; /* max_bytes each */
};

/* Each GPU's stream, events and buffers (what it sends set to its own byte), peer access
 * between every pair that has it, and one NCCL communicator per GPU. */
static void open_gpus(struct gpu *g, ncclComm_t *comm, int count, size_t bytes)
{
    int devices[MAX_GPUS];
    for (int i = 0; i < count; i++) {
        g[i].device = devices[i] = i;
        CUDA_CHECK(cudaSetDevice(i));
        CUDA_CHECK(cudaStreamCreateWithFlags(&g[i].stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&g[i].start));
        CUDA_CHECK(cudaEventCreate(&g[i].stop));
        CUDA_CHECK(cudaEventCreateWithFlags(&g[i].received, cudaEventDisableTiming));
        CUDA_CHECK(cudaMalloc(&g[i].send, bytes));
        CUDA_CHECK(cudaMalloc(&g[i].receive, bytes));
        CUDA_CHECK(cudaMemset(g[i].send, PATTERN_BASE + i, bytes));
        for (int j = 0; j < count; j++) {
            int can = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
            if (j != i && can)
                CUDA_CHECK(cudaDeviceEnablePeerAccess(j, 0));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    NCCL_CHECK(ncclCommInitAll(comm, count, devices));
}

static void close_gpus(struct gpu *g, ncclComm_t *comm, int count)
{
    for (int i = 0; i < count; i++) {
        NCCL_CHECK(ncclCommDestroy(comm[i]));
        CUDA_CHECK(cudaSetDevice(i));
        CUDA_CHECK(cudaFree(g[i].send));
        CUDA_CHECK(cudaFree(g[i].receive));
        CUDA_CHECK(cudaEventDestroy(g[i].start));
        CUDA_CHECK(cudaEventDestroy(g[i].stop));
        CUDA_CHECK(cudaEventDestroy(g[i].received));
        CUDA_CHECK(cudaStreamDestroy(g[i].stream));
    }
}

/* One message of `bytes` from GPU a to GPU b: NCCL's send and receive in one group, or
 * a peer copy on the receiver's stream; the receiver's stream starts after the sender's
 * start event, and the sender's stream waits for the receiver's end. */
static void transfer(struct gpu *a, struct gpu *b, ncclComm_t *comm, size_t bytes, bool nccl)
{
    CUDA_CHECK(cudaSetDevice(a->device));
    CUDA_CHECK(cudaEventRecord(a->start, a->stream));
    CUDA_CHECK(cudaStreamWaitEvent(b->stream, a->start, 0));
    if (nccl) {
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclSend(a->send, bytes, ncclUint8, b->device, comm[a->device], a->stream));
        NCCL_CHECK(ncclRecv(b->receive, bytes, ncclUint8, a->device, comm[b->device],
                            b->stream));
        NCCL_CHECK(ncclGroupEnd());
    } else {
        CUDA_CHECK(cudaSetDevice(b->device));
        CUDA_CHECK(cudaMemcpyPeerAsync(b->receive, b->device, a->send, a->device, bytes,
                                       b->stream));
    }
    CUDA_CHECK(cudaSetDevice(b->device));
    CUDA_CHECK(cudaEventRecord(b->received, b->stream));
    CUDA_CHECK(cudaSetDevice(a->device));
    CUDA_CHECK(cudaStreamWaitEvent(a->stream, b->received, 0));
    CUDA_CHECK(cudaEventRecord(a->stop, a->stream));
}

/* Median milliseconds of reps transfers after WARMUP untimed ones. */
static double median_ms(struct gpu *a, struct gpu *b, ncclComm_t *comm, size_t bytes, bool nccl,
                        int reps)
{
    double *ms = malloc((size_t)reps * sizeof *ms);
    if (!ms) {
        print_error("out of host memory for %d times", reps);
        exit(1);
    }
    for (int r = -WARMUP; r < reps; r++) {
        transfer(a, b, comm, bytes, nccl);
        CUDA_CHECK(cudaEventSynchronize(a->stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, a->start, a->stop));
        if (r >= 0)
            ms[r] = t;
    }
    const double median = timing_from_samples(ms, reps).median_ms;
    free(ms);
    return median;
}

/* b's receive buffer back to b's own byte, so that only a transfer can change it. */
static void reset_receive(const struct gpu *b, size_t bytes)
{
    CUDA_CHECK(cudaSetDevice(b->device));
    CUDA_CHECK(cudaMemset(b->receive, PATTERN_BASE + b->device, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
}

/* Whether b received a's bytes: its first and last byte are a's, not its own. */
static bool arrived(const struct gpu *a, const struct gpu *b, size_t bytes)
{
    unsigned char first = 0, last = 0;
    CUDA_CHECK(cudaSetDevice(b->device));
    CUDA_CHECK(cudaMemcpy(&first, b->receive, 1, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&last, (const char *)b->receive + bytes - 1, 1,
                          cudaMemcpyDeviceToHost));
    const unsigned char sent = (unsigned char)(PATTERN_BASE + a->device);
    if (first == sent && last == sent)
        return true;
    print_error("GPU %d -> %d, %zu bytes: received 0x%02x ... 0x%02x, sent 0x%02x", a->device,
                b->device, bytes, first, last, sent);
    return false;
}

static double gbps(size_t bytes, double ms)
{
    return ms > 0 ? bytes / (ms * 1e6) : 0;
}

/* The first exchange of a pair, from the host's clock: NCCL connects the two GPUs then. */
static double first_exchange_ms(struct gpu *a, struct gpu *b, ncclComm_t *comm)
{
    const double t0 = host_now_ms();
    transfer(a, b, comm, MIN_BYTES, true);
    CUDA_CHECK(cudaEventSynchronize(a->stop));
    return host_now_ms() - t0;
}

int main(int argc, char **argv)
{
    struct int_flag flags[] = {
        {"--gpus", "GPUs to pair, from device 0 (0: every one)", 0, MAX_GPUS, 0},
        {"--reps", "timed transfers per size and pair", 1, 10000, DEFAULT_REPS},
        {"--max-bytes", "the largest message", (long long)MIN_BYTES, 1LL << 30,
         (long long)DEFAULT_MAX_BYTES},
    };
    bool done = false;
    const int rc = int_flags_parse(argc, argv,
                                   "usage: exchange_sweep [--gpus N] [--reps R] [--max-bytes B]",
                                   flags, (int)(sizeof flags / sizeof flags[0]), &done);
    if (rc || done)
        return rc;
    const struct {
        int gpus, reps;
        size_t max_bytes;
    } o = {(int)flags[0].value, (int)flags[1].value, (size_t)flags[2].value};
    int gpus = 0;
    const int found = several_gpus("exchange_sweep", o.gpus, &gpus);
    if (found)
        return found;
    struct gpu g[MAX_GPUS];
    ncclComm_t comm[MAX_GPUS];
    open_gpus(g, comm, gpus, o.max_bytes);
    struct gpu_info info;
    gpu_query(0, &info);
    int nccl_version = 0;
    NCCL_CHECK(ncclGetVersion(&nccl_version));
    printf("exchange_sweep | %d x %s | NCCL %d | median of %d transfers after %d warm-up ones\n",
           gpus, info.name, nccl_version, o.reps, WARMUP);
    printf("figures to set beside these (lesson 12's page): NCCL send/recv about 3 us for small "
           "messages and 300-370 GB/s for large ones over NVLink on H100/H200\n");
    printf("%-7s %12s %12s %10s %12s %10s\n", "pair", "bytes", "nccl us", "nccl GB/s",
           "peer us", "peer GB/s");
    bool ok = true;
    for (int i = 0; i < gpus; i++)
        for (int j = 0; j < gpus; j++) {
            if (i == j)
                continue;
            printf("%d -> %d  first NCCL exchange (connection set-up): %.1f ms\n", i, j,
                   first_exchange_ms(&g[i], &g[j], comm));
            for (size_t bytes = MIN_BYTES; bytes <= o.max_bytes; bytes *= SIZE_STEP) {
                reset_receive(&g[j], bytes);
                const double nccl = median_ms(&g[i], &g[j], comm, bytes, true, o.reps);
                ok = arrived(&g[i], &g[j], bytes) && ok;
                reset_receive(&g[j], bytes);
                const double peer = median_ms(&g[i], &g[j], comm, bytes, false, o.reps);
                ok = arrived(&g[i], &g[j], bytes) && ok;
                printf("%d -> %d  %12zu %12.1f %10.1f %12.1f %10.1f\n", i, j, bytes, nccl * 1e3,
                       gbps(bytes, nccl), peer * 1e3, gbps(bytes, peer));
            }
        }
    close_gpus(g, comm, gpus);
    return ok ? 0 : 1;
}
