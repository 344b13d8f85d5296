"""What the course's convolution kernels accept (conv2d, binary_conv2d), checked on the
tensors' metadata alone, so that the real kernel and the fake one (torch.compile's
tracing) raise the same errors before any GPU work; and the checks every op shares:

    ValueError           what the call gets wrong: a CPU tensor, shapes that do not
                         match, a memory format the kernel does not read, a bad precision
                         or kernel name
    TypeError            an argument of the wrong type, a dtype no kernel of the course
                         has, or two dtypes in one call
    NotImplementedError  a convolution PyTorch has but the lessons do not: stride 2,
                         padding other than "same", an even or non-square filter, ...
"""

from typing import NamedTuple

import torch

from . import _library

MAX_KSIZE = 31  # conv_problem.h
INT32_MAX = 2**31 - 1
PRECISIONS = ("fp32", "tf32", "3xtf32")
_DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
_DESCRIPTIONS = {"fp32": "float32 at precision 'fp32'", "tf32": "float32 at precision 'tf32'",
                 "3xtf32": "float32 at precision '3xtf32'", "fp16": "float16",
                 "bf16": "bfloat16", "binary": "binary_conv2d"}
_MEMORY_FORMATS = {
    "nchw": (torch.contiguous_format, "contiguous (NCHW)", "{0}.contiguous()"),
    "nhwc": (torch.channels_last, "channels_last (NHWC)",
             "{0}.contiguous(memory_format=torch.channels_last)"),
}


class Format(NamedTuple):
    """How a call runs: the kernels' dtype and layout (conv_torch.h)."""
    dtype: str
    layout: str

    @property
    def memory_format(self):
        return _MEMORY_FORMATS[self.layout][0]


def format_of(x, precision):
    """float32 runs in NCHW at precision fp32, in NHWC on tensor cores at tf32 or 3xtf32;
    float16 and bfloat16 in NHWC."""
    if x.dtype not in _DTYPE_NAMES:
        raise TypeError(f"x is {x.dtype}; conv_lessons.conv2d takes float32, float16 or "
                        "bfloat16")
    if x.dtype != torch.float32:
        if precision is not None:
            raise ValueError(f"precision={precision!r} chooses how float32 is multiplied; x is "
                             f"{x.dtype}, which runs in its own type (leave precision out)")
        return Format(_DTYPE_NAMES[x.dtype], "nhwc")
    if precision is None or precision == "fp32":
        return Format("fp32", "nchw")
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r}: 'fp32', 'tf32' or '3xtf32'")
    return Format(precision, "nhwc")


def check_device(op, name, t, first="x", on=None):
    """t on CUDA, on the device of the op's first tensor `on` (named first)."""
    # meta: shapes only, as the fake kernel sees them.
    if t.device.type not in ("cuda", "meta"):
        raise ValueError(f"{name} is on {t.device}: conv_lessons.{op} runs on CUDA tensors "
                         f"(move it with {name}.cuda())")
    if on is not None and t.device != on.device:
        raise ValueError(f"{name} is on {t.device} but {first} is on {on.device}")


def _check_dtype(name, t, x):
    if t.dtype != x.dtype:
        raise TypeError(f"{name} is {t.dtype} but x is {x.dtype}; give both the same dtype")


def check_float32(op, name, t):
    if t.dtype != torch.float32:
        raise TypeError(f"{name} is {t.dtype}; conv_lessons.{op} takes float32 (call "
                        f"{name}.float())")


def check_contiguous(name, t):
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous: call {name}.contiguous()")


def check_tensors(named):
    """Each (name, value) a torch.Tensor."""
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} is a {type(t).__name__}, not a torch.Tensor")


def check_forward_only(op, named, alternative):
    """An op that writes in place records no graph: rather than hand back a result that
    gradients silently skip, it refuses inputs that require grad while grad is on."""
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for _, t in named):
        raise NotImplementedError(
            f"conv_lessons.{op} is forward only: it has no backward. Run it under "
            f"torch.no_grad() or torch.inference_mode(), or train with {alternative}.")


def _check_memory_format(name, t, f):
    memory_format, what, fix = _MEMORY_FORMATS[f.layout]
    if not t.is_contiguous(memory_format=memory_format):
        raise ValueError(f"{name} must be {what} for {_DESCRIPTIONS[f.dtype]}: call "
                         f"{fix.format(name)}")


def _check_kernel(kernel, f):
    """A kernel named by the caller is one of the library's, for the call's format."""
    if kernel is None:
        return
    kernels = _library.conv2d_kernels()
    if kernel not in kernels:
        raise ValueError(f"kernel={kernel!r}: one of " + ", ".join(
            name for name, format_ in kernels.items() if format_ == f))
    if kernels[kernel] != f:
        raise ValueError(f"kernel={kernel!r} runs {kernels[kernel][0]} in the "
                         f"{kernels[kernel][1]} layout; this call is {f.dtype} in {f.layout}")


def _check_ranks(x, weight):
    if x.dim() != 4:
        raise ValueError(f"x has shape {tuple(x.shape)}; it must be 4-D: (N, C, H, W)")
    if weight.dim() != 4:
        raise ValueError(f"weight has shape {tuple(weight.shape)}; it must be 4-D: "
                         "(out channels, in channels, k, k)")


def check_inputs(x, weight, bias, precision, kernel=None, op="conv2d"):
    """The Format of the call, or the exception that says what is wrong. op "binary_conv2d"
    is lesson 09's layer on the signs of float32 x and weight, in NHWC."""
    check_device(op, "x", x)
    check_device(op, "weight", weight, on=x)
    _check_ranks(x, weight)
    if op == "binary_conv2d":
        check_float32(op, "x", x)
        f = Format("binary", "nhwc")
    else:
        f = format_of(x, precision)
    _check_dtype("weight", weight, x)
    n, cin, h, w = x.shape
    cout, weight_cin, r, s = weight.shape
    if weight_cin != cin:
        raise ValueError(f"weight has {weight_cin} input channels but x has {cin} (one group "
                         "only)")
    if cin == 0:
        raise ValueError("x has 0 channels")
    if r != s:
        raise NotImplementedError(f"a {r}x{s} filter: the lessons' filters are square")
    if r % 2 == 0 or r > MAX_KSIZE:
        raise NotImplementedError(f"a {r}x{s} filter: the lessons' filters are odd, 1x1 to "
                                  f"{MAX_KSIZE}x{MAX_KSIZE}")
    if bias is not None:
        check_device(op, "bias", bias, on=x)
        _check_dtype("bias", bias, x)
        if bias.dim() != 1 or bias.shape[0] != cout:
            raise ValueError(f"bias has shape {tuple(bias.shape)}; it must be ({cout},), one "
                             "value per output channel")
        check_contiguous("bias", bias)
    _check_memory_format("x", x, f)
    _check_memory_format("weight", weight, f)
    _check_kernel(kernel, f)
    if max(x.numel(), weight.numel(), n * cout * h * w) > INT32_MAX:
        raise NotImplementedError("a tensor of more than 2^31-1 elements: the kernels index "
                                  "with 32-bit integers")
    return f


def check_arguments(x, weight, bias, stride, padding, dilation, groups, precision, kernel):
    """What the op's schema cannot say in the user's words, and the arguments of
    torch.nn.functional.conv2d that the lessons fix."""
    def pair(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v, v)

    check_tensors([("x", x), ("weight", weight)] + ([("bias", bias)] if bias is not None else []))
    if precision is not None and not isinstance(precision, str):
        raise TypeError(f"precision={precision!r}: give the string 'fp32', 'tf32' or "
                        "'3xtf32'")
    if kernel is not None and not isinstance(kernel, str):
        raise TypeError(f"kernel={kernel!r}: give a kernel's name as a string, or None for "
                        "the fastest")
    if pair(stride) != (1, 1):
        raise NotImplementedError(f"stride={stride}: the lessons' kernels run stride 1 only")
    if pair(dilation) != (1, 1):
        raise NotImplementedError(f"dilation={dilation}: the lessons' kernels have none")
    if groups != 1:
        raise NotImplementedError(f"groups={groups}: the lessons' kernels run one group only")
    if padding == "same" or weight.dim() != 4:
        return
    half = (weight.shape[2] // 2, weight.shape[3] // 2)
    if pair(padding) != half:
        raise NotImplementedError(f"padding={padding!r}: the lessons' kernels pad 'same' only "
                                  f"(padding={half[0]} for a {weight.shape[2]}x"
                                  f"{weight.shape[3]} filter)")
