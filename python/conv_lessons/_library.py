"""libconv_torch.so through ctypes: the C ABI of python/src/conv_torch.h, and its
statuses turned into Python exceptions.

The library is loaded at the first call that needs it, so that the checks and the fake
(meta) kernels work where it is not built. CONV_LESSONS_LIBRARY names another copy
(a build tree's, say) instead of the one installed beside this file."""

import ctypes
import functools
import os
import pathlib

DTYPES = {"fp32": 0, "tf32": 1, "3xtf32": 2, "fp16": 3, "bf16": 4}
LAYOUTS = {"nchw": 0, "nhwc": 1}

# enum conv_torch_status: the exception each status raises.
_EXCEPTIONS = {1: ValueError, 2: NotImplementedError, 3: RuntimeError}
_ERROR_SIZE = 512

_int = ctypes.c_int
_ptr = ctypes.c_void_p
_SHAPE = [_int] * 6  # n, cin, cout, h, w, ksize


@functools.cache
def library():
    path = os.environ.get("CONV_LESSONS_LIBRARY") or pathlib.Path(__file__).with_name(
        "libconv_torch.so")
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise RuntimeError(f"conv_lessons cannot load its kernels from {path} ({e}); "
                           "install the package with: pip install ./python") from e
    lib.conv_torch_conv2d_plan.argtypes = [
        _int, *_SHAPE, _int, _int, ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_size_t), ctypes.c_char_p, ctypes.c_size_t]
    lib.conv_torch_conv2d.argtypes = [
        _int, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, ctypes.c_size_t, *_SHAPE, _int, _int,
        ctypes.c_char_p, ctypes.c_size_t]
    lib.conv_torch_conv2d_plan.restype = _int
    lib.conv_torch_conv2d.restype = _int
    return lib


def _raise_for(status, err):
    if status != 0:
        raise _EXCEPTIONS.get(status, RuntimeError)(
            "conv_lessons.conv2d: " + err.value.decode(errors="replace"))


def conv2d_plan(device, shape, dtype, layout):
    """(kernel name, scratch bytes) of the kernel that runs this problem on device."""
    kernel, scratch = ctypes.c_char_p(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(_ERROR_SIZE)
    status = library().conv_torch_conv2d_plan(
        device, *shape, DTYPES[dtype], LAYOUTS[layout], ctypes.byref(kernel),
        ctypes.byref(scratch), err, _ERROR_SIZE)
    _raise_for(status, err)
    return kernel.value.decode(), scratch.value


def conv2d(device, stream, x, weight, bias, y, scratch, scratch_bytes, shape, dtype, layout):
    """Enqueues y = conv2d(x, weight) + bias on stream; pointers as integers (0: none)."""
    err = ctypes.create_string_buffer(_ERROR_SIZE)
    status = library().conv_torch_conv2d(
        device, stream, x, weight, bias or None, y, scratch or None, scratch_bytes, *shape,
        DTYPES[dtype], LAYOUTS[layout], err, _ERROR_SIZE)
    _raise_for(status, err)
