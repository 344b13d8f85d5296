#!/usr/bin/env python3
"""What a call of conv_lessons.conv2d costs above its bare kernel (issue 31's target: at
most 5 us in eager mode), on a small problem where that cost shows.

The bare kernel is the C ABI's conv_torch_conv2d called through ctypes with every tensor
allocated beforehand: its GPU time per call (CUDA events around calls queued behind a
sleeping kernel, so no host time shows) is the floor. conv_lessons.conv2d runs the op's
implementation itself where nothing needs the dispatcher (conv_lessons/_launch.py); the
row through torch.ops.conv_lessons.conv2d shows what the dispatcher adds. Each way of
calling it is timed the same way on the GPU, and by the wall clock over back-to-back
calls, as a Python loop sees it: `above kernel` is that time per call less the bare
kernel's GPU time.

    python3 python/bench/overhead.py                       # 1 x 16 -> 16, 64x64, 3x3
    python3 python/bench/overhead.py --cin 1 --cout 1 --size 256x256 --csv overhead.csv

Needs a CUDA GPU (exit 77 without one) and the package (pip install ./python)."""

import sys

import torch

import report
import timing

TARGET_US = 5.0
# Calls queued behind the sleeping kernel for the GPU's time. 1000 did not fit the driver's
# queue of pending launches on the H200 (a call launches two kernels: the kernel's setup,
# which re-lays the weights, then its run): the host then waited for room and its pace
# showed, 23.3 us a call for eager against 13.6 over 100 calls
# (results/h200/python_overhead_gpu_calls.log: --gpu-calls 100 to 1000).
GPU_CALLS = 100
COLUMNS = ["call", "kernel", "host us per call", "GPU us per call", "above kernel us"]


def parse_args():
    p = report.argument_parser(__doc__)
    p.add_argument("--batch", type=int, default=1, help="N (default 1)")
    p.add_argument("--cin", type=int, default=16, help="input channels (default 16)")
    p.add_argument("--cout", type=int, default=16, help="output channels (default 16)")
    p.add_argument("--size", default="64x64", help="HxW (default 64x64)")
    p.add_argument("--ksize", type=int, default=3, help="odd filter size (default 3)")
    p.add_argument("--calls", type=int, default=1000,
                   help="calls per host timing (default 1000)")
    p.add_argument("--gpu-calls", type=int, default=GPU_CALLS,
                   help=f"calls per GPU timing (default {GPU_CALLS})")
    p.add_argument("--reps", type=int, default=11, help="timings, the median kept (default 11)")
    args = p.parse_args()
    try:
        args.h, args.w = (int(v) for v in args.size.split("x"))
    except ValueError:
        p.error(f"--size {args.size!r}: HxW, as 64x64")
    return args


def bare_kernel(x, w, b):
    """conv_torch_conv2d through ctypes, its output and scratch allocated once."""
    from conv_lessons import _checks, _library
    from conv_lessons.conv2d_op import new_output

    f = _checks.Format("fp32", "nchw")
    shape = (x.shape[0], x.shape[1], w.shape[0], x.shape[2], x.shape[3], w.shape[2])
    device = x.device.index
    kernel, scratch_bytes = _library.conv2d_plan("conv2d", device, None, shape, f.dtype,
                                                 f.layout)
    y = new_output(x, w, f)
    scratch = torch.empty(scratch_bytes, dtype=torch.uint8, device=x.device)
    stream = torch.cuda.current_stream().cuda_stream
    arguments = (x.data_ptr(), w.data_ptr(), b.data_ptr(), 0, y.data_ptr(), scratch.data_ptr(),
                 scratch_bytes, shape, f.dtype, f.layout)

    def call():
        _library.conv2d("conv2d", device, stream, None, *arguments)
    return kernel, call


def main():
    args = parse_args()
    timing.require_gpu("overhead.py")
    import conv_lessons

    x = torch.randn(args.batch, args.cin, args.h, args.w, device="cuda")
    w = torch.randn(args.cout, args.cin, args.ksize, args.ksize, device="cuda")
    b = torch.randn(args.cout, device="cuda")
    kernel, bare = bare_kernel(x, w, b)

    def eager():
        conv_lessons.conv2d(x, w, b)

    compiled_fn = torch.compile(lambda x, w, b: conv_lessons.conv2d(x, w, b), fullgraph=True)
    graphed_fn = torch.compile(lambda x, w, b: conv_lessons.conv2d(x, w, b), fullgraph=True,
                               mode="reduce-overhead")
    calls = [
        ("bare kernel (C ABI through ctypes)", kernel, bare),
        ("conv_lessons.conv2d, eager", kernel, eager),
        # What conv_lessons.conv2d's eager path spares (conv_lessons/_launch.py): the same
        # call through PyTorch's dispatcher, as autograd, modes and the profiler take it.
        ("torch.ops.conv_lessons.conv2d, eager (through the dispatcher)", kernel,
         lambda: torch.ops.conv_lessons.conv2d(x, w, b, None, None)),
        ("conv_lessons.conv2d, torch.compile", kernel, lambda: compiled_fn(x, w, b)),
        ("conv_lessons.conv2d, torch.compile reduce-overhead (CUDA graph)", kernel,
         lambda: graphed_fn(x, w, b)),
        ("torch.nn.functional.conv2d, eager", "cuDNN", lambda: torch.nn.functional.conv2d(
            x, w, b, padding=args.ksize // 2)),
    ]
    with torch.no_grad():
        kernel_us = timing.gpu_per_call(bare, args.gpu_calls, args.reps)
        rows = []
        for name, runs, fn in calls:
            try:
                for _ in range(3):  # compile, capture, warm up
                    fn()
                host = timing.host_per_call(fn, args.calls, args.reps)
                gpu = timing.gpu_per_call(fn, args.gpu_calls, args.reps)
            except (RuntimeError, NotImplementedError) as e:
                print(f"{name}: not timed: {str(e).splitlines()[0]}", file=sys.stderr)
                continue
            rows.append({"call": name, "kernel": runs, "host us per call": host,
                         "GPU us per call": gpu, "above kernel us": host - kernel_us})
    print(f"{report.describe_device()}")
    print(f"conv2d n={args.batch} cin={args.cin} cout={args.cout} {args.h}x{args.w} "
          f"k={args.ksize}, float32 NCHW; bare kernel {kernel_us:.2f} us on the GPU; medians "
          f"of {args.reps} timings of {args.calls} calls (host), {args.gpu_calls} (GPU)\n")
    report.print_table(COLUMNS, rows)
    eager_row = next((r for r in rows if r["call"] == "conv_lessons.conv2d, eager"), None)
    if eager_row:
        verdict = "met" if eager_row["above kernel us"] <= TARGET_US else "missed"
        print(f"\neager: {eager_row['above kernel us']:.2f} us above the bare kernel; target "
              f"<= {TARGET_US:g} us: {verdict}")
    if args.csv:
        report.write_csv(args.csv, COLUMNS, rows)


if __name__ == "__main__":
    main()
