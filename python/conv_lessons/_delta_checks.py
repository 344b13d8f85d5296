"""What lesson 11's delta layer accepts (lessons/11_delta/problem.h: delta_shape_problem,
delta_threshold_problem), checked before any GPU work, in the exceptions of _checks.py."""

import math

import torch

from ._checks import INT32_MAX, check_device, check_float32, in_memory_format
from ._library import DELTA_VARIANTS

_OP = "DeltaConv2d"
MAX_KSIZE = 7  # DELTA_MAX_KSIZE: the units' shared memory
UNIT = 8  # DELTA_UNIT: a tile is a whole number of 8x8 units


def check_threshold(threshold):
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold={threshold!r}: give a number")
    # Comparisons, not math.isfinite: under torch.compile(dynamic=True) the threshold is a
    # symbolic float, which math.isfinite breaks the graph on. NaN fails both.
    if not (0 <= threshold < math.inf):
        raise ValueError(f"threshold={threshold!r}: a finite number >= 0 (a pixel is applied "
                         "when its largest channel change passes it)")


def check_layer(channels, kernel_size, threshold, tile, variant):
    """The layer's own settings, when it is made."""
    for name, value in (("channels", channels), ("kernel_size", kernel_size), ("tile", tile)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}={value!r}: give an int")
    if channels < 1:
        raise ValueError(f"channels={channels}: at least 1 (the layer maps C channels to C)")
    if kernel_size < 1 or kernel_size % 2 == 0 or kernel_size > MAX_KSIZE:
        raise NotImplementedError(f"kernel_size={kernel_size}: the lesson's filters are odd, "
                                  f"1x1 to {MAX_KSIZE}x{MAX_KSIZE}")
    if tile < UNIT or tile % UNIT:
        raise ValueError(f"tile={tile}: a positive multiple of {UNIT} pixels (the kernels' "
                         f"{UNIT}x{UNIT} units)")
    check_threshold(threshold)
    if variant not in DELTA_VARIANTS:
        raise ValueError(f"variant={variant!r}: one of " + ", ".join(map(repr, DELTA_VARIANTS)))


def check_frame(frame, weight, bias):
    """A frame the layer (weight C x C x k x k channels_last, bias C) runs: (1, C, H, W),
    float32, channels_last, on the layer's CUDA device."""
    if not isinstance(frame, torch.Tensor):
        raise TypeError(f"frame is a {type(frame).__name__}, not a torch.Tensor")
    check_device(_OP, "frame", frame)
    if weight.device != frame.device:
        raise ValueError(f"the layer is on {weight.device} but the frame is on {frame.device}: "
                         f"move the layer with .to({str(frame.device)!r})")
    check_float32(_OP, "frame", frame)
    c = weight.shape[0]
    if frame.dim() != 4:
        raise ValueError(f"frame has shape {tuple(frame.shape)}; it must be 4-D: "
                         f"(1, {c}, H, W)")
    n, frame_c, h, w = frame.shape
    if n != 1:
        raise NotImplementedError(f"a batch of {n}: the delta layer keeps one video's state "
                                  "and runs its frames one at a time (batch 1)")
    if frame_c != c:
        raise ValueError(f"frame has {frame_c} channels; the layer maps {c} to {c}")
    if h < 1 or w < 1:
        raise ValueError(f"frame is {h}x{w}: at least 1x1")
    if not in_memory_format(frame, torch.channels_last):
        raise ValueError("frame must be channels_last (NHWC): call "
                         "frame.contiguous(memory_format=torch.channels_last)")
    if h * w * c > INT32_MAX:
        raise NotImplementedError("a frame of more than 2^31-1 elements: the kernels index "
                                  "with 32-bit integers")
    for name, t in (("weight", weight), ("bias", bias)):
        check_float32(_OP, name, t)


def check_op(out, state, frame, weight, bias):
    """All the op (torch.ops.conv_lessons.delta_conv2d_) is given, for a caller without
    the module: the frame, weights (C, C, k, k) channels_last, bias (C,), the output so
    far like the frame, and the state, bytes on the same device."""
    check_frame(frame, weight, bias)
    for name, t in (("bias", bias), ("out", out), ("state", state)):
        check_device(_OP, name, t, "frame", frame)
    c, _, k, _ = weight.shape
    if tuple(weight.shape) != (c, c, k, k) or k % 2 == 0 or k > MAX_KSIZE:
        raise ValueError(f"weight has shape {tuple(weight.shape)}; it must be (C, C, k, k), "
                         f"k odd up to {MAX_KSIZE}")
    if not in_memory_format(weight, torch.channels_last):
        raise ValueError("weight must be channels_last (KRSC): call "
                         "weight.contiguous(memory_format=torch.channels_last)")
    if tuple(bias.shape) != (c,) or not in_memory_format(bias):
        raise ValueError(f"bias has shape {tuple(bias.shape)}; it must be ({c},), contiguous")
    if (out.shape != frame.shape or out.dtype != torch.float32 or out.device != frame.device
            or not in_memory_format(out, torch.channels_last)):
        raise ValueError("out must be float32 like the frame: the same shape and device, "
                         "channels_last")
    if state.dtype != torch.uint8 or state.dim() != 1 or state.device != frame.device:
        raise ValueError("state must be a 1-D uint8 tensor on the frame's device "
                         "(torch.ops.conv_lessons.delta_state makes it)")
