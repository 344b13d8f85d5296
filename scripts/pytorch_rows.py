#!/usr/bin/env python3
"""Append PyTorch's rows to a bench CSV: the number the seeds compared against.

For each preset, torch.nn.functional.conv2d (bias included, "same" padding, NCHW, or
NHWC as torch.channels_last with --layouts nhwc) is timed like the harness times a variant: inputs rotated over enough buffer sets to
outgrow the L2 four times, warm-up runs, then one CUDA-event pair per repetition,
median and min. Two rows per preset:
  pytorch       TF32 off (torch.backends.cudnn.allow_tf32 = False): true fp32
  pytorch_tf32  PyTorch's default, TF32 allowed on tensor cores
Each is checked against a float64 conv of the same inputs with the harness's own
tolerance (common/measure/verify.c: rtol = 2*2*u_operand + 8*sqrt(C*R*S + bias)*u_accumulate,
relative to |bias| + sum|w*x|), so PASS means the same thing as in a lesson's row.
cudnn_ms, vs_cudnn and roofline_pct come from the CSV's own cuDNN row of the same
preset, precision and layout (the same sweep); left empty where there is none.

Runs only where PyTorch with CUDA imports (the GPU machine has it); elsewhere it says
why and exits 0 without writing. Exit 2 on bad arguments, 1 if a row FAILs.

    python3 scripts/pytorch_rows.py --csv bench.csv --lesson-bin build/bin/07_multichannel \
        --presets seed000 big3 unet-3x64
    python3 scripts/pytorch_rows.py --csv bench.csv --lesson-bin build/bin/07_multichannel \
        --presets vtest-c64 --layouts nchw nhwc
"""
import argparse
import csv
import datetime
import itertools
import math
import os
import re
import statistics
import subprocess
import sys

ROTATE_L2_FACTOR = 4   # as common/measure/gpu_timer.h
MAX_BUFFER_SETS = 32
FP32_U = 2.0 ** -24
TF32_U = 2.0 ** -11
OPERAND_SAFETY = 2.0
ACCUMULATE_SAFETY = 8.0
PRESET_LINE = re.compile(r"^(\S+)\s+n=(\d+) cin=(\d+) cout=(\d+) (\d+)x(\d+) ksize=(\d+)( bias)?")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def presets_from(binary):
    """{name: (n, cin, cout, h, w, k, bias)} as the harness defines them (--list-presets)."""
    out = subprocess.run([binary, "--list-presets"], capture_output=True, text=True, check=True)
    presets = {}
    for line in out.stdout.splitlines():
        m = PRESET_LINE.match(line)
        if m:
            n, cin, cout, h, w, k = (int(g) for g in m.groups()[1:7])
            presets[m.group(1)] = (n, cin, cout, h, w, k, m.group(8) is not None)
    return presets


def commit():
    """As cmake/build_info.cmake: the .commit written for a copy wins, then git."""
    path = os.path.join(REPO, ".commit")
    if os.path.exists(path):
        return open(path).read().strip()
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "none"


def cudnn_row(rows, preset, dtype, layout):
    """The last cuDNN row of this preset, precision and layout, or None."""
    found = None
    for r in rows:
        if (r["variant"] == "cudnn" and r["preset"] == preset and r["dtype"] == dtype
                and r["layout"] == layout and r["median_ms"]):
            found = r
    return found


def time_conv(torch, fn, sets, warmup, reps):
    for i in range(warmup):
        fn(i % len(sets))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn(i % len(sets))
        stops[i].record()
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in zip(starts, stops)]
    return statistics.median(times), min(times)


def measure(torch, name, shape, tf32, layout, args, rows, device):
    n, cin, cout, h, w, k, has_bias = shape
    F = torch.nn.functional
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    set_bytes = 4 * n * h * w * (cin + cout)
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 64 << 20)
    free, _ = torch.cuda.mem_get_info()
    count = max(1, min(MAX_BUFFER_SETS, -(-ROTATE_L2_FACTOR * l2 // set_bytes),
                       free // 2 // set_bytes))
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    uniform = lambda *dims: (torch.rand(*dims, device="cuda", generator=gen) * 2 - 1  # noqa: E731
                             ).contiguous(memory_format=fmt if len(dims) == 4 else
                                          torch.contiguous_format)
    xs = [uniform(n, cin, h, w) for _ in range(count)]
    weight = uniform(cout, cin, k, k)
    bias = uniform(cout) if has_bias else None
    outs = [torch.empty(n, cout, h, w, device="cuda", memory_format=fmt) for _ in range(count)]

    def run(i):
        outs[i].copy_(F.conv2d(xs[i], weight, bias, padding=k // 2))

    def conv_only(i):
        return F.conv2d(xs[i], weight, bias, padding=k // 2)

    # Timed: the conv alone (the copy above is only for the checked run).
    median, low = time_conv(torch, conv_only, xs, args.warmup, args.reps)
    run(0)
    torch.cuda.synchronize()
    x64, w64 = xs[0].double(), weight.double()
    b64 = bias.double() if bias is not None else None
    ref = F.conv2d(x64, w64, b64, padding=k // 2)
    mag = F.conv2d(x64.abs(), w64.abs(), b64.abs() if b64 is not None else None, padding=k // 2)
    terms = cin * k * k + (1 if has_bias else 0)
    rtol = (OPERAND_SAFETY * 2 * (TF32_U if tf32 else 0.0)
            + ACCUMULATE_SAFETY * math.sqrt(terms) * FP32_U)
    diff = (outs[0].double() - ref).abs()
    passed = bool((diff <= 1.1754943508222875e-38 + rtol * mag).all())
    rel = (diff.norm() / ref.norm()).item()
    max_abs = diff.max().item()

    dtype = "tf32" if tf32 else "fp32"
    flops = 2.0 * n * cout * h * w * cin * k * k
    min_bytes = 4.0 * (n * cin * h * w + cout * cin * k * k + (cout if has_bias else 0)
                       + n * cout * h * w)
    base = cudnn_row(rows, name, dtype, layout)
    cudnn_ms = float(base["median_ms"]) if base else None
    roof = None
    if base and base["roofline_pct"]:
        roof_ms = float(base["median_ms"]) * float(base["roofline_pct"]) / 100.0
        roof = 100.0 * roof_ms / median
    fmt = lambda v, f: "" if v is None else f % v  # noqa: E731
    return {
        "lesson": "pytorch", "variant": "pytorch_tf32" if tf32 else "pytorch", "preset": name,
        "device": device, "n": n, "cin": cin, "cout": cout, "h": h, "w": w, "ksize": k,
        "dtype": dtype, "median_ms": "%.6f" % median, "min_ms": "%.6f" % low,
        "gbps": "%.2f" % (min_bytes / median / 1e6), "gflops": "%.2f" % (flops / median / 1e6),
        "roofline_pct": fmt(roof, "%.2f"), "cudnn_ms": fmt(cudnn_ms, "%.6f"),
        "vs_cudnn": fmt(cudnn_ms / median if cudnn_ms else None, "%.4f"),
        "rel_err": "%.3e" % rel, "max_abs_err": "%.3e" % max_abs,
        "status": "PASS" if passed else "FAIL", "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "layout": layout,
        "params": "torch=%s;cudnn=%s;bias=included;benchmark=%s" % (
            torch.__version__, torch.backends.cudnn.version(), torch.backends.cudnn.benchmark),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--csv", required=True, help="bench CSV to append to (header must exist)")
    p.add_argument("--lesson-bin", required=True, help="a lesson binary, for --list-presets")
    p.add_argument("--presets", nargs="+", required=True)
    p.add_argument("--layouts", nargs="+", choices=("nchw", "nhwc"), default=["nchw"],
                   help="memory layouts to time each preset in (default: nchw)")
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("pytorch_rows: skipped: PyTorch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("pytorch_rows: skipped: PyTorch sees no CUDA GPU")
        return 0
    try:
        with open(args.csv, newline="") as f:
            reader = csv.DictReader(f)
            header, rows = reader.fieldnames, list(reader)
    except OSError as e:
        print(f"error: --csv {args.csv}: {e.strerror}", file=sys.stderr)
        return 2
    presets = presets_from(args.lesson_bin)
    unknown = [name for name in args.presets if name not in presets]
    if unknown or not header:
        print(f"error: --presets: unknown {', '.join(unknown)}" if unknown else
              f"error: --csv {args.csv}: no header", file=sys.stderr)
        return 2
    device = torch.cuda.get_device_name(0)
    new = []
    for name, layout, tf32 in itertools.product(args.presets, args.layouts, (False, True)):
        row = measure(torch, name, presets[name], tf32, layout, args, rows, device)
        print(f"{row['variant']:13s} {name:15s} {layout} {row['median_ms']:>10s} ms  "
              f"vs cuDNN {row['vs_cudnn'] or '-':>7s}  rel err {row['rel_err']}  "
              f"max abs {row['max_abs_err']}  {row['status']}")
        new.append(row)
        torch.cuda.empty_cache()
    # One write of all rows: the CSV is never left with half of them.
    with open(args.csv, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writerows(new)
    return 1 if any(r["status"] == "FAIL" for r in new) else 0


if __name__ == "__main__":
    sys.exit(main())
