"""How the benchmarks in python/bench time a call, and their common exit: 77 with one
line where no CUDA GPU is there (as the lessons do).

    gpu_per_call    the GPU's time per call, from CUDA events around `calls` calls queued
                    behind a sleeping kernel, so that the host's time to issue them does
                    not show (the harness's protocol: events around the launches only),
                    as long as the calls' launches fit the driver's queue of pending work;
                    past it the host waits for room, and its pace shows from there on
    host_per_call   wall-clock time per call over `calls` back-to-back calls, synchronised
                    at the end: what a Python loop sees, the GPU idle where the host is
                    slower
    event_times     one CUDA-event pair per call, after warm-up, inputs rotated over sets
                    that outgrow the L2 (as scripts/pytorch_rows.py does), the calls queued
                    behind a sleeping kernel so that each pair times the GPU's work alone:
                    median, min
    notebook_times  seed 000's %timeit: 7 runs of `loops` calls, mean and standard
                    deviation of the time per call (each run synchronised at its end, so
                    the time is the GPU's where the queue fills)"""

import statistics
import sys
import time

import torch

NO_GPU = 77
SLEEP_CYCLES = 200_000_000  # about 0.1 s: longer than the host takes to queue the calls
ROTATE_L2_FACTOR = 4  # common/measure/gpu_timer.h
MAX_SETS = 32
NOTEBOOK_RUNS = 7  # %timeit's default


def require_gpu(script):
    if not torch.cuda.is_available():
        print(f"{script}: no CUDA GPU (torch.cuda.is_available() is False); nothing timed",
              file=sys.stderr)
        sys.exit(NO_GPU)


def rotation_sets(bytes_per_set):
    """How many input sets outgrow the L2 ROTATE_L2_FACTOR times (at least 1)."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return max(1, min(MAX_SETS, -(-ROTATE_L2_FACTOR * l2 // max(1, bytes_per_set))))


def gpu_per_call(fn, calls, reps):
    """Median GPU microseconds per call of fn()."""
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    return statistics.median(times)


def _wall_per_call(fn, calls):
    """Wall-clock microseconds per call of fn() over `calls` back-to-back calls, from an
    idle GPU to the end of the last."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e6 / calls


def host_per_call(fn, calls, reps):
    """Median wall-clock microseconds per call of fn(), back to back."""
    return statistics.median(_wall_per_call(fn, calls) for _ in range(reps))


def event_times(fn, sets, warmup, reps):
    """(median, min) milliseconds of fn(*sets[i]) over reps calls, inputs rotated."""
    for i in range(warmup):
        fn(*sets[i % len(sets)])
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
             for _ in range(reps)]
    torch.cuda._sleep(SLEEP_CYCLES)
    for i, (start, end) in enumerate(pairs):
        start.record()
        fn(*sets[i % len(sets)])
        end.record()
    torch.cuda.synchronize()
    times = [start.elapsed_time(end) for start, end in pairs]
    return statistics.median(times), min(times)


def notebook_times(fn, loops):
    """(mean, standard deviation) microseconds per call over NOTEBOOK_RUNS runs."""
    per_call = [_wall_per_call(fn, loops) for _ in range(NOTEBOOK_RUNS)]
    return statistics.mean(per_call), statistics.stdev(per_call)
