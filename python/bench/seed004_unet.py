#!/usr/bin/env python3
"""Seed 004's U-Net layers through conv_lessons.conv2d beside torch.nn.Conv2d, in fp32
(PyTorch with TF32 off, the course's lesson 07), TF32 (PyTorch's default for
convolutions, the course's lesson 08 at precision "tf32", channels_last) and fp16
(channels_last for both, lesson 08). The layers are the harness's unet-* presets
(common/tensor/conv_problem.c): batch 4, 3x3, bias. torch.backends.cudnn.benchmark is on,
so PyTorch runs the fastest algorithm cuDNN finds, as the harness's cuDNN rows do. Each
call is timed with one CUDA-event pair, after warm-up, inputs rotated over sets that
outgrow the L2: median ms; `speed-up` is PyTorch's median over the course's.

    python3 python/bench/seed004_unet.py
    python3 python/bench/seed004_unet.py --layers unet-3x64 unet-512x512 --csv unet.csv

Needs a CUDA GPU (exit 77 without one) and the package (pip install ./python)."""

import torch

import report
import timing

BATCH, K = 4, 3
# name: (cin, cout, size), as the harness's presets (common/tensor/conv_problem.c).
LAYERS = {
    "unet-3x64": (3, 64, 512), "unet-64x64": (64, 64, 512), "unet-64x128": (64, 128, 256),
    "unet-128x128": (128, 128, 256), "unet-128x256": (128, 256, 128),
    "unet-256x256": (256, 256, 128), "unet-256x512": (256, 512, 64),
    "unet-512x512": (512, 512, 64), "unet-512x1024": (512, 1024, 32),
    "unet-1024x1024": (1024, 1024, 32),
}
# precision: (dtype, memory format, PyTorch's TF32 setting, conv_lessons' precision)
PRECISIONS = {
    "fp32": (torch.float32, torch.contiguous_format, False, None),
    "tf32": (torch.float32, torch.channels_last, True, "tf32"),
    "fp16": (torch.float16, torch.channels_last, False, None),
}
COLUMNS = ["layer", "precision", "torch.nn.Conv2d ms", "conv_lessons ms", "speed-up",
           "conv_lessons kernel"]


def parse_args():
    p = report.argument_parser(__doc__)
    p.add_argument("--layers", nargs="+", default=list(LAYERS), choices=list(LAYERS),
                   metavar="LAYER", help="of " + ", ".join(LAYERS) + " (default: all)")
    p.add_argument("--precisions", nargs="+", default=list(PRECISIONS),
                   choices=list(PRECISIONS), help="(default: all)")
    p.add_argument("--reps", type=int, default=50, help="timed calls (default 50)")
    p.add_argument("--warmup", type=int, default=10, help="untimed calls first (default 10)")
    return p.parse_args()


def main():
    args = parse_args()
    timing.require_gpu("seed004_unet.py")
    import conv_lessons

    torch.backends.cudnn.benchmark = True
    rows = []
    with torch.no_grad():
        for layer in args.layers:
            cin, cout, size = LAYERS[layer]
            for precision in args.precisions:
                dtype, memory_format, tf32, ours = PRECISIONS[precision]
                torch.backends.cudnn.allow_tf32 = tf32
                conv = torch.nn.Conv2d(cin, cout, K, padding=K // 2).cuda().to(
                    dtype=dtype, memory_format=memory_format)
                w, b = conv.weight, conv.bias
                count = timing.rotation_sets(BATCH * (cin + cout) * size * size * w.element_size())
                sets = [(torch.randn(BATCH, cin, size, size, device="cuda", dtype=dtype)
                         .contiguous(memory_format=memory_format),) for _ in range(count)]
                theirs, _ = timing.event_times(conv, sets, args.warmup, args.reps)
                mine, _ = timing.event_times(
                    lambda x: conv_lessons.conv2d(x, w, b, precision=ours), sets, args.warmup,
                    args.reps)
                rows.append({"layer": layer, "precision": precision,
                             "torch.nn.Conv2d ms": theirs, "conv_lessons ms": mine,
                             "speed-up": theirs / mine,
                             "conv_lessons kernel": conv_lessons.kernel_for(sets[0][0], w, ours)})
                del sets, conv
    print(report.describe_device())
    print(f"seed 004's U-Net layers: batch {BATCH}, {K}x{K}, bias; median of {args.reps} "
          "calls, CUDA events\n")
    report.print_table(COLUMNS, rows)
    if args.csv:
        report.write_csv(args.csv, COLUMNS, rows)


if __name__ == "__main__":
    main()
