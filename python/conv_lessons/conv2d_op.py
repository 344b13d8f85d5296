"""conv2d: the course's fastest convolution kernels as the PyTorch custom op
torch.ops.conv_lessons.conv2d, forward only.

The problem is the lessons': stride 1, "same" zero padding, no dilation, one group, an
odd square filter from 1x1 to 31x31, a bias per output channel or none. What runs:

    x                               memory format   kernel
    float32, precision "fp32"       contiguous      lesson 05 strip_ring (1 channel in and
                                                    out), else lesson 07 implicit_gemm_async
    float32, "tf32" or "3xtf32"     channels_last   lesson 08 mma_tf32 or 3xtf32
    float16, bfloat16               channels_last   lesson 08 wgmma or mma.sync

The output has x's dtype and memory format. The op launches on
torch.cuda.current_stream(); the fake kernel gives torch.compile the output's shape,
dtype and strides. Backward raises NotImplementedError."""

from typing import Optional

import torch

from . import _checks, _library


def _shape(x, weight):
    n, cin, h, w = x.shape
    return (n, cin, weight.shape[0], h, w, weight.shape[2])


def _new_output(x, weight, f):
    n, _, h, w = x.shape
    return torch.empty((n, weight.shape[0], h, w), dtype=x.dtype, device=x.device,
                       memory_format=f.memory_format)


# needs_exact_strides: torch.compile hands the op its inputs in the memory format they
# had when traced, the one the kernels read.
@torch.library.custom_op("conv_lessons::conv2d", mutates_args=(),
                         tags=(torch.Tag.needs_exact_strides,))
def _conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
            precision: Optional[str] = None) -> torch.Tensor:
    f = _checks.check_inputs(x, weight, bias, precision)
    y = _new_output(x, weight, f)
    if y.numel() == 0:
        return y
    shape, device = _shape(x, weight), x.device.index
    with torch.cuda.device(device):
        _, scratch_bytes = _library.conv2d_plan(device, shape, f.dtype, f.layout)
        # Allocated on the current stream, as the output and the float32 bias: the
        # caching allocator reuses them only after the kernel, in stream order.
        scratch = torch.empty(scratch_bytes, dtype=torch.uint8, device=x.device)
        bias32 = None if bias is None else bias.float()
        _library.conv2d(device, torch.cuda.current_stream(device).cuda_stream, x.data_ptr(),
                        weight.data_ptr(), 0 if bias32 is None else bias32.data_ptr(),
                        y.data_ptr(), scratch.data_ptr(), scratch_bytes, shape, f.dtype,
                        f.layout)
    return y


@_conv2d.register_fake
def _conv2d_fake(x, weight, bias=None, precision=None):
    return _new_output(x, weight, _checks.check_inputs(x, weight, bias, precision))


def _no_backward(ctx, grad):
    raise NotImplementedError(
        "conv_lessons.conv2d is forward only: it has no backward. Run it under "
        "torch.no_grad() or torch.inference_mode(), or train with "
        "torch.nn.functional.conv2d.")


_conv2d.register_autograd(_no_backward)


def conv2d(x, weight, bias=None, stride=1, padding="same", dilation=1, groups=1, *,
           precision=None):
    """torch.nn.functional.conv2d on the course's kernels, for what the lessons run:
    stride 1, padding "same" (or k // 2), dilation 1, groups 1. precision ("fp32",
    "tf32" or "3xtf32") chooses how float32 is multiplied; fp32 by default."""
    _checks.check_arguments(x, weight, bias, stride, padding, dilation, groups, precision)
    return torch.ops.conv_lessons.conv2d(x, weight, bias, precision)


def kernel_for(x, weight, precision=None):
    """The lesson kernel conv2d runs for these inputs on their GPU, as
    "07_multichannel/implicit_gemm_async"; raises as conv2d does where none runs."""
    f = _checks.check_inputs(x, weight, None, precision)
    if x.device.type != "cuda":
        raise ValueError(f"x is on {x.device}: a kernel runs CUDA tensors only")
    with torch.cuda.device(x.device.index):
        return _library.conv2d_plan(x.device.index, _shape(x, weight), f.dtype, f.layout)[0]
