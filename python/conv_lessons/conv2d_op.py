"""conv2d: the course's convolution kernels as the PyTorch custom op
torch.ops.conv_lessons.conv2d, forward only.

The problem is the lessons': stride 1, "same" zero padding, no dilation, one group, an
odd square filter from 1x1 to 31x31, a bias per output channel or none. What runs by
default, the course's fastest kernel for the call:

    x                               memory format   kernel
    float32, precision "fp32"       contiguous      lesson 05 strip_ring (1 channel in and
                                                    out), else lesson 07 implicit_gemm_async
    float32, "tf32"                 channels_last   lesson 08 wgmma_tf32 or mma_tf32
    float32, "3xtf32"               channels_last   lesson 08 3xtf32
    float16, bfloat16               channels_last   lesson 08 wgmma or mma.sync

kernel= names another of the course's kernels for the same dtype and memory format,
checked against conv2d_kernels(): for seed 000's rerun, lesson 02's naive kernel
("02_gpu_naive/block16x16", the seed's, or "02_gpu_naive/block32x8") and lesson 04's
tilings ("04_shared_tiling/tile_in", "tile_out", "tile_cached_halo"), single-channel
float32 in NCHW; or a fast one by name ("05_register_tiling/strip_ring", ...). A named
kernel that does not take the shape or the GPU raises NotImplementedError, as the
default's absence does.

The output has x's dtype and memory format. The op launches on
torch.cuda.current_stream(); the fake kernel gives torch.compile the output's shape,
dtype and strides. Backward raises NotImplementedError."""

from typing import Optional

import torch

from . import _checks, _launch, _library


def _shape(x, weight):
    n, cin, h, w = x.shape
    return (n, cin, weight.shape[0], h, w, weight.shape[2])


def new_output(x, weight, f):
    """The output of a convolution in format f: x's dtype but float32 for binary."""
    n, _, h, w = x.shape
    dtype = torch.float32 if f.dtype == "binary" else x.dtype
    return torch.empty((n, weight.shape[0], h, w), dtype=dtype, device=x.device,
                       memory_format=f.memory_format)


# [page: launch]
def launch(op, x, weight, bias, scale, f, kernel):
    """y = the convolution in format f on the current stream (scale: binary's alpha)."""
    y = new_output(x, weight, f)
    if y.numel() == 0:
        return y
    shape, device = _shape(x, weight), x.device.index
    with _launch.on_device(device):
        _, scratch_bytes = _library.conv2d_plan(op, device, kernel, shape, f.dtype, f.layout)
        # Allocated on the current stream, as the output and the float32 bias: the
        # caching allocator reuses them only after the kernel, in stream order.
        scratch = torch.empty(scratch_bytes, dtype=torch.uint8,
                              device=x.device) if scratch_bytes else None
        bias32 = None if bias is None else bias.float()
        _library.conv2d(op, device, _launch.stream_handle(device), kernel,
                        x.data_ptr(), weight.data_ptr(),
                        0 if bias32 is None else bias32.data_ptr(),
                        0 if scale is None else scale.data_ptr(), y.data_ptr(),
                        0 if scratch is None else scratch.data_ptr(), scratch_bytes, shape,
                        f.dtype, f.layout)
    return y
# [/page: launch]


# needs_exact_strides: torch.compile hands the op its inputs in the memory format they
# had when traced, the one the kernels read. The schema calls the kernel's name
# kernel_name: inductor passes an op's arguments on by name to a function whose own
# first parameter is `kernel` (FallbackKernel.create), and one of that name collides.
# [page: custom_op]
@torch.library.custom_op("conv_lessons::conv2d", mutates_args=(),
                         tags=(torch.Tag.needs_exact_strides,))
def _conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
            precision: Optional[str] = None, kernel_name: Optional[str] = None) -> torch.Tensor:
    f = _checks.check_inputs_again(x, weight, bias, precision, kernel_name)
    return launch("conv2d", x, weight, bias, None, f, kernel_name)


@_conv2d.register_fake
def _conv2d_fake(x, weight, bias=None, precision=None, kernel_name=None):
    return new_output(x, weight, _checks.check_inputs(x, weight, bias, precision, kernel_name))


def no_backward(op, alternative):
    """An autograd formula that says the op is forward only, and what to train with."""
    def backward(ctx, grad):
        raise NotImplementedError(
            f"conv_lessons.{op} is forward only: it has no backward. Run it under "
            f"torch.no_grad() or torch.inference_mode(), or train with {alternative}.")
    return backward


_conv2d.register_autograd(no_backward("conv2d", "torch.nn.functional.conv2d"))
# [/page: custom_op]


def conv2d(x, weight, bias=None, stride=1, padding="same", dilation=1, groups=1, *,
           precision=None, kernel=None):
    """torch.nn.functional.conv2d on the course's kernels, for what the lessons run:
    stride 1, padding "same" (or k // 2), dilation 1, groups 1. precision ("fp32",
    "tf32" or "3xtf32") chooses how float32 is multiplied; fp32 by default. kernel names
    one of conv2d_kernels() instead of the fastest."""
    _checks.check_arguments(x, weight, bias, stride, padding, dilation, groups, precision,
                            kernel)
    # The op's implementation (_conv2d's two lines), as the dispatcher would run it,
    # without the dispatcher's cost; torch.compile, autograd, modes and the profiler get
    # the op itself (_launch.py). The fake kernel checks afresh: it sees symbolic sizes.
    if _launch.runs_eagerly((x, weight, bias)):
        f = _checks.check_inputs_again(x, weight, bias, precision, kernel)
        return launch("conv2d", x, weight, bias, None, f, kernel)
    return torch.ops.conv_lessons.conv2d(x, weight, bias, precision, kernel)


def kernel_for(x, weight, precision=None):
    """The lesson kernel conv2d runs for these inputs on their GPU, as
    "07_multichannel/implicit_gemm_async"; raises as conv2d does where none runs."""
    f = _checks.check_inputs(x, weight, None, precision)
    if x.device.type != "cuda":
        raise ValueError(f"x is on {x.device}: a kernel runs CUDA tensors only")
    with _launch.on_device(x.device.index):
        return _library.conv2d_plan("conv2d", x.device.index, None, _shape(x, weight),
                                    f.dtype, f.layout)[0]


def conv2d_kernels(dtype="fp32", layout="nchw"):
    """The names conv2d's kernel= takes for a dtype ("fp32", "tf32", "3xtf32", "fp16",
    "bf16") in a layout ("nchw" for contiguous, "nhwc" for channels_last), from the
    library (no GPU needed); binary_conv2d's are ("binary", "nhwc")."""
    return tuple(name for name, f in _library.conv2d_kernels().items() if f == (dtype, layout))
