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
    """t on CUDA, on the device of the op's first tensor `on` (named first, checked
    before t). Where `on` is on CUDA and t is not on its device, what to do is to move t
    there, not to CUDA at large (t.cuda() goes to the current device, which need not be
    on's), so the message names both devices and that move."""
    if on is not None and t.device != on.device:
        raise ValueError(f"{name} is on {t.device} but {first} is on {on.device}: "
                         f"conv_lessons.{op} takes all its tensors on one CUDA device (move it "
                         f"with {name}.to({first}.device))")
    # meta: shapes only, as the fake kernel sees them.
    if t.device.type not in ("cuda", "meta"):
        raise ValueError(f"{name} is on {t.device}: conv_lessons.{op} runs on CUDA tensors "
                         f"(move it with {name}.cuda())")


def _check_dtype(name, t, x):
    if t.dtype != x.dtype:
        raise TypeError(f"{name} is {t.dtype} but x is {x.dtype}; give both the same dtype")


def check_float32(op, name, t):
    if t.dtype != torch.float32:
        raise TypeError(f"{name} is {t.dtype}; conv_lessons.{op} takes float32 (call "
                        f"{name}.float())")


# The dimensions of a channels_last (NHWC) tensor from the innermost: C, W, H, N.
_CHANNELS_LAST_ORDER = (1, 3, 2, 0)


def in_memory_format(t, memory_format=torch.contiguous_format):
    """t.is_contiguous(memory_format=memory_format), also where torch.compile traces t with
    symbolic sizes (dynamic shapes, which it turns on by itself once a size changes).
    There PyTorch 2.11 says that a channels_last tensor made in the graph (x * 2,
    torch.empty_like(x, memory_format=torch.channels_last)) is not channels_last while
    its strides are, and the fake kernels refused it; such a tensor's strides are read
    instead, as c10 reads them (a dimension of size 1 takes any stride)."""
    if t.is_contiguous(memory_format=memory_format):
        return True
    if not any(isinstance(v, torch.SymInt) for v in (*t.shape, *t.stride())):
        return False  # real sizes: PyTorch's answer stands
    if memory_format == torch.channels_last:
        if t.dim() != 4:
            return False
        order = _CHANNELS_LAST_ORDER
    elif t.numel() == 0:
        return True
    else:
        order = range(t.dim() - 1, -1, -1)
    expected = 1
    for d in order:
        if t.shape[d] != 1:
            if t.stride(d) != expected:
                return False
            expected = expected * t.shape[d]
    return True


def check_contiguous(name, t):
    if not in_memory_format(t):
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
    if not in_memory_format(t, memory_format):
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


# check_inputs' answers for the real calls that passed, by what it reads of the tensors:
# a launch checks afresh only a call unlike those before. (The fake kernels check
# afresh every time: under torch.compile the sizes may be symbolic.)
_PASSED = {}
_PASSED_MAX = 4096


def check_inputs_again(x, weight, bias, precision, kernel=None, op="conv2d"):
    """check_inputs, its Format kept per call signature (devices, dtypes, shapes and
    strides, which decide everything it checks, with precision, kernel and op; precision
    and kernel strings or None, as check_arguments makes sure): a layer called again
    with tensors like the last ones costs one dictionary look-up. A call that raises
    keeps nothing, so it raises again."""
    key = (op, precision, kernel, x.device, x.dtype, x.shape, x.stride(), weight.device,
           weight.dtype, weight.shape, weight.stride(),
           None if bias is None else (bias.device, bias.dtype, bias.shape, bias.stride()))
    f = _PASSED.get(key)
    if f is None:
        f = check_inputs(x, weight, bias, precision, kernel, op)
        if len(_PASSED) >= _PASSED_MAX:
            _PASSED.clear()
        _PASSED[key] = f
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
