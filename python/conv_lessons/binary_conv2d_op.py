"""binary_conv2d: lesson 09's binarised layer as the PyTorch custom op
torch.ops.conv_lessons.binary_conv2d, forward only.

XNOR-Net's layer as the lesson defines it (docs/09_binary.md): the input and the
weights are replaced by their signs (+1 where >= 0, -1 below, NaN included), and

    y[n, k, i, j] = alpha[k] * sum_{c,di,dj} sign(x[n, c, i+di-r, j+dj-r]) * sign(w[k, c, di, dj])
                    + bias[k],       alpha[k] = mean |w[k]| over (c, di, dj)

with "same" zero padding (an outside tap adds nothing: a packed bit cannot say 0, so the
kernels count the taps inside the image), stride 1 and an odd square filter from 1x1 to
31x31. x, weight and bias are float32; x and weight channels_last (NHWC, KRSC: rows of
channels, which the op packs 32 to a 32-bit word on the GPU); the output is float32,
channels_last. The sum of +-1 products is exact; the output is one fmaf(alpha, sum, bias).

What runs: the lesson's fastest variant the GPU can run, pack_bmma_and (the bit tensor
cores, compute capability 8.0, the input packed inside the call and the weights in its
setup), else packed_xnor (XOR + popcount on the CUDA cores) fed by the same packing.
kernel= names one of them ("09_binary/pack_bmma_and", "09_binary/packed_xnor").

The op launches on torch.cuda.current_stream(); the fake kernel gives torch.compile the
output's shape, dtype and strides. Bad input raises ValueError, TypeError or
NotImplementedError before any GPU work, as conv2d does; backward raises
NotImplementedError."""

from typing import Optional

import torch

from . import _checks, _launch
from .conv2d_op import launch, new_output, no_backward

_OP = "binary_conv2d"


# kernel_name, not kernel: see conv2d_op.py.
@torch.library.custom_op("conv_lessons::binary_conv2d", mutates_args=(),
                         tags=(torch.Tag.needs_exact_strides,))
def _binary_conv2d(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
                   kernel_name: Optional[str] = None) -> torch.Tensor:
    return _run(x, weight, bias, kernel_name)


def _run(x, weight, bias, kernel):
    """The op's implementation: its checks, alpha, then the launch."""
    f = _checks.check_inputs_again(x, weight, bias, None, kernel, op=_OP)
    # XNOR-Net's scale, on the current stream like the kernels that read it.
    alpha = weight.abs().mean(dim=(1, 2, 3))
    return launch(_OP, x, weight, bias, alpha, f, kernel)


@_binary_conv2d.register_fake
def _binary_conv2d_fake(x, weight, bias=None, kernel_name=None):
    return new_output(x, weight,
                      _checks.check_inputs(x, weight, bias, None, kernel_name, op=_OP))


_binary_conv2d.register_autograd(no_backward(_OP, "a straight-through estimator on "
                                             "torch.nn.functional.conv2d of the signs"))


def binary_conv2d(x, weight, bias=None, stride=1, padding="same", dilation=1, groups=1, *,
                  kernel=None):
    """Lesson 09's binary layer on the signs of x and weight (float32, channels_last),
    scaled by alpha = mean |weight| per output channel, plus bias; the arguments of
    torch.nn.functional.conv2d that the lesson fixes are checked as conv2d checks them."""
    _checks.check_arguments(x, weight, bias, stride, padding, dilation, groups, None, kernel)
    if _launch.runs_eagerly((x, weight, bias)):  # as conv2d: the op without its dispatch
        return _run(x, weight, bias, kernel)
    return torch.ops.conv_lessons.binary_conv2d(x, weight, bias, kernel)
