"""The CUDA convolution course's fastest kernels as PyTorch custom ops, forward only.

    import torch, conv_lessons
    y = conv_lessons.conv2d(x, w, b)                   # float32 NCHW, lesson 05 or 07
    y = conv_lessons.conv2d(x, w, b, precision="tf32")  # channels_last, lesson 08
    conv_lessons.kernel_for(x, w)                      # which lesson kernel runs

conv2d is torch.ops.conv_lessons.conv2d (conv2d_op.py says what it runs and raises)."""

from .conv2d_op import conv2d, kernel_for

__all__ = ["conv2d", "kernel_for"]
