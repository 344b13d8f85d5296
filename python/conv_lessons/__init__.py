"""The CUDA convolution course's kernels as PyTorch custom ops, forward only.

    import torch, conv_lessons
    y = conv_lessons.conv2d(x, w, b)                   # float32 NCHW, lesson 05 or 07
    y = conv_lessons.conv2d(x, w, b, precision="tf32")  # channels_last, lesson 08
    y = conv_lessons.conv2d(x, w, kernel="04_shared_tiling/tile_in")  # a named kernel
    conv_lessons.kernel_for(x, w)                      # which lesson kernel runs
    conv_lessons.conv2d_kernels()                      # the names kernel= takes
    y = conv_lessons.binary_conv2d(x, w, b)            # lesson 09, channels_last float32
    s = conv_lessons.covariance(mu, gamma, c, out)     # lesson 10: out + the term
    conv_lessons.covariance_(mu, gamma, c, out)        # the same, into out
    layer = conv_lessons.DeltaConv2d(64, 3).cuda()     # lesson 11: frame by frame
    y = layer(frame)

Each op's module says what it runs and raises: conv2d_op.py, binary_conv2d_op.py,
covariance_op.py, delta_conv2d.py."""

from .binary_conv2d_op import binary_conv2d
from .conv2d_op import conv2d, conv2d_kernels, kernel_for
from .covariance_op import covariance, covariance_
from .delta_conv2d import DeltaConv2d

__all__ = ["binary_conv2d", "conv2d", "conv2d_kernels", "covariance", "covariance_",
           "DeltaConv2d", "kernel_for"]
