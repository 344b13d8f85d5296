/* A timeline of every kernel, copy and memset a CUDA program runs, on every GPU, and of
 * every CUDA call its host threads make, from CUPTI's activity records: what Nsight
 * Systems draws, for machines without it. The CUDA driver loads this library into any
 * program when CUDA_INJECTION64_PATH names it and calls InitializeInjection at the
 * program's first CUDA call; nothing in the program changes. scripts/timeline.sh sets
 * that up:
 *
 *   scripts/timeline.sh trace.csv build/bin/12_multi_gpu --variant rows_overlap --gpus 2
 *   python3 plots/timeline.py trace.csv timeline.png
 *
 * The CSV, named by CONV_TIMELINE, has one row per activity: device (-1 for a host
 * call), stream, kind (kernel, copy, memset; runtime or driver for a call of the CUDA
 * runtime or driver API, NCCL's launches among them), name (a kernel's mangled name, a
 * call's function), start and end in nanoseconds on CUPTI's clock, which the host and
 * all GPUs share, bytes (copies and memsets) and blocks (a kernel's grid).
 * It is written as CONV_TIMELINE.part and renamed when the program exits, so a run
 * that dies leaves no half-written file under the name asked for. Recording costs
 * the program a little time: take the timeline and the timings from separate runs. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUFFER_BYTES (8u << 20)
#define RECORD_ALIGN 8

static FILE *trace;
static char *trace_path, *part_path;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t dropped;

static void fail(const char *what, CUptiResult r)
{
    const char *text = "unknown";
    cuptiGetResultString(r, &text);
    fprintf(stderr, "error: timeline: %s: %s\n", what, text);
    exit(2);
}

#define CUPTI_OR_FAIL(call)                                                                        \
    do {                                                                                           \
        CUptiResult r_ = (call);                                                                   \
        if (r_ != CUPTI_SUCCESS)                                                                   \
            fail(#call, r_);                                                                       \
    } while (0)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(RECORD_ALIGN, BUFFER_BYTES);
    if (!*buffer) {
        fprintf(stderr, "error: timeline: out of memory for CUPTI's records\n");
        exit(2);
    }
    *size = BUFFER_BYTES;
    *max_records = 0; /* as many as fit */
}

static const char *copy_name(uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "copy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "copy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "copy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "copy PtoP";
    default: return "copy";
    }
}

static void write_row(int device, uint32_t stream, const char *kind, const char *name,
                      uint64_t start, uint64_t end, uint64_t bytes, long long blocks)
{
    fprintf(trace, "%d,%u,%s,\"%s\",%llu,%llu,%llu,%lld\n", device, stream, kind, name,
            (unsigned long long)start, (unsigned long long)end, (unsigned long long)bytes, blocks);
}

static void write_record(const CUpti_Activity *record)
{
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)record;
        const long long blocks = (long long)k->gridX * k->gridY * k->gridZ;
        write_row(k->deviceId, k->streamId, "kernel", k->name ? k->name : "?", k->start, k->end, 0,
                  blocks);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)record;
        write_row(c->deviceId, c->streamId, "copy", copy_name(c->copyKind), c->start, c->end,
                  c->bytes, 0);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *c = (const CUpti_ActivityMemcpyPtoP4 *)record;
        write_row(c->deviceId, c->streamId, "copy", "copy peer", c->start, c->end, c->bytes, 0);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)record;
        write_row(m->deviceId, m->streamId, "memset", "memset", m->start, m->end, m->bytes, 0);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *c = (const CUpti_ActivityAPI *)record;
        const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        const char *name = "?";
        cuptiGetCallbackName(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                             c->cbid, &name);
        write_row(-1, 0, runtime ? "runtime" : "driver", name, c->start, c->end, 0, 0);
        break;
    }
    default: break;
    }
}

static void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    (void)context;
    (void)stream;
    (void)size;
    pthread_mutex_lock(&trace_lock);
    CUpti_Activity *record = NULL;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
        write_record(record);
    size_t lost = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &lost) == CUPTI_SUCCESS)
        dropped += lost;
    pthread_mutex_unlock(&trace_lock);
    free(buffer);
}

/* At exit: every record still buffered written, then the file put under its name. */
static void finish(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&trace_lock);
    const int failed = ferror(trace) | fclose(trace);
    if (failed || rename(part_path, trace_path) != 0) {
        fprintf(stderr, "error: timeline: could not write %s: %s\n", trace_path, strerror(errno));
        remove(part_path);
    } else if (dropped) {
        fprintf(stderr, "timeline: %zu records dropped (CUPTI's buffers were full)\n", dropped);
    }
    pthread_mutex_unlock(&trace_lock);
}

/* Called by the CUDA driver, once, at the program's first CUDA call. */
int InitializeInjection(void)
{
    const char *path = getenv("CONV_TIMELINE");
    if (!path || !*path) {
        fprintf(stderr, "error: timeline: CONV_TIMELINE must name the CSV file to write\n");
        exit(2);
    }
    trace_path = strdup(path);
    part_path = malloc(strlen(path) + sizeof ".part");
    if (!trace_path || !part_path) {
        fprintf(stderr, "error: timeline: out of memory\n");
        exit(2);
    }
    strcpy(part_path, path);
    strcat(part_path, ".part");
    trace = fopen(part_path, "w");
    if (!trace) {
        fprintf(stderr, "error: timeline: CONV_TIMELINE %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fprintf(trace, "device,stream,kind,name,start_ns,end_ns,bytes,blocks\n");
    CUPTI_OR_FAIL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    CUPTI_OR_FAIL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    atexit(finish);
    return 1;
}
