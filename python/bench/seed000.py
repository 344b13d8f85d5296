#!/usr/bin/env python3
"""Seed 000's notebook rerun from PyTorch: its 1000x2000 single-channel 3x3 convolution
(torch.rand input, torch.nn.Conv2d(1, 1, 3, bias=False, padding=1)) timed as the notebook
timed it, %timeit's 7 runs of many calls, mean +- standard deviation per call, for
torch.nn.Conv2d and the course's kernels through conv_lessons.conv2d: the naive kernel of
lesson 02 (the seed's 16x16 blocks, and 32x8), lesson 04's three tilings (the seed's
shared-memory kernel) and the fastest (lesson 05). Each row is also timed the harness's
way, one CUDA-event pair per call, median and min, and checked against
torch.nn.Conv2d in float64.

    python3 python/bench/seed000.py
    python3 python/bench/seed000.py --loops 2000 --csv seed000.csv

Needs a CUDA GPU (exit 77 without one) and the package (pip install ./python)."""

import torch

import report
import timing

H, W, K = 1000, 2000, 3
KERNELS = ["02_gpu_naive/block16x16", "02_gpu_naive/block32x8", "04_shared_tiling/tile_in",
           "04_shared_tiling/tile_out", "04_shared_tiling/tile_cached_halo", None]
COLUMNS = ["call", "kernel", "notebook us", "notebook +- us", "events median us",
           "events min us", "torch.nn.Conv2d / this", "max abs error"]


def parse_args():
    p = report.argument_parser(__doc__)
    p.add_argument("--loops", type=int, default=1000,
                   help="calls per %%timeit run (default 1000; the notebook's were 10000)")
    p.add_argument("--reps", type=int, default=200, help="CUDA-event timings (default 200)")
    return p.parse_args()


def main():
    args = parse_args()
    timing.require_gpu("seed000.py")
    import conv_lessons

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(1, 1, K, bias=False, padding=K // 2).cuda()
    m1 = torch.rand(H, W, device="cuda")
    sets = [(torch.rand(1, 1, H, W, device="cuda"),)
            for _ in range(timing.rotation_sets(2 * H * W * 4))]
    weight = conv.weight.detach()
    calls = [("torch.nn.Conv2d (TF32 allowed, PyTorch's default)", "cuDNN", conv, True),
             ("torch.nn.Conv2d, TF32 off", "cuDNN", conv, False)]
    calls += [(f"conv_lessons.conv2d(kernel={k!r})", k or conv_lessons.kernel_for(
        sets[0][0], weight), lambda x, k=k: conv_lessons.conv2d(x, weight, kernel=k), True)
              for k in KERNELS]
    with torch.no_grad():
        reference = torch.nn.functional.conv2d(m1[None, None].double(), weight.double(),
                                               padding=K // 2)
        rows, baseline = [], None
        for name, kernel, fn, tf32 in calls:
            torch.backends.cudnn.allow_tf32 = tf32
            error = (fn(m1[None, None]).double() - reference).abs().max().item()
            mean, std = timing.notebook_times(lambda: fn(m1[None, None]), args.loops)
            median, least = timing.event_times(fn, sets, warmup=10, reps=args.reps)
            baseline = baseline or mean
            rows.append({"call": name, "kernel": kernel, "notebook us": mean,
                         "notebook +- us": std, "events median us": median * 1e3,
                         "events min us": least * 1e3, "torch.nn.Conv2d / this": baseline / mean,
                         "max abs error": error})
    print(report.describe_device())
    print(f"seed 000: 1 x 1 x {H} x {W}, {K}x{K}, float32; notebook: {timing.NOTEBOOK_RUNS} "
          f"runs of {args.loops} calls on one input (L2-resident, as the notebook's); events: "
          f"{args.reps} calls over {len(sets)} inputs that outgrow the L2\n")
    report.print_table(COLUMNS, rows)
    if args.csv:
        report.write_csv(args.csv, COLUMNS, rows)


if __name__ == "__main__":
    main()
