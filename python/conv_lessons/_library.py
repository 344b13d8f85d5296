"""libconv_torch.so through ctypes: the C ABI of python/src/conv_torch.h, covariance.h and
delta_conv2d.h, and its statuses turned into Python exceptions.

The library is loaded at the first call that needs it, so that the checks and the fake
(meta) kernels work where it is not built. CONV_LESSONS_LIBRARY names another copy
(a build tree's, say) instead of the one installed beside this file."""

import ctypes
import functools
import os
import pathlib
import threading

DTYPES = {"fp32": 0, "tf32": 1, "3xtf32": 2, "fp16": 3, "bf16": 4, "binary": 5}
LAYOUTS = {"nchw": 0, "nhwc": 1}
COVARIANCE_LAYOUTS = {"seed": 0, "compact": 1}
DELTA_VARIANTS = {"dense": 0, "tile_mask": 1, "delta_update": 2, "delta_compact": 3}

# enum conv_torch_status: the exception each status raises.
_EXCEPTIONS = {1: ValueError, 2: NotImplementedError, 3: RuntimeError}
_ERROR_SIZE = 512

_int = ctypes.c_int
_ptr = ctypes.c_void_p
_str = ctypes.c_char_p
_PLAN_OUT = [ctypes.POINTER(_str), ctypes.POINTER(ctypes.c_size_t), _str, ctypes.c_size_t]
_ERR = [_str, ctypes.c_size_t]
_SHAPE = [_int] * 6  # n, cin, cout, h, w, ksize (covariance: b, ci, co, h, w, k)
_DELTA_SHAPE = [_int] * 5  # h, w, c, ksize, tile

_SIGNATURES = {
    "conv_torch_conv2d_plan": [_int, _str, *_SHAPE, _int, _int, *_PLAN_OUT],
    "conv_torch_conv2d": [_int, _ptr, _str, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr,
                          ctypes.c_size_t, *_SHAPE, _int, _int, *_ERR],
    "conv_torch_covariance_plan": [_int, *_SHAPE, _int, _int, *_PLAN_OUT],
    "conv_torch_covariance": [_int, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, ctypes.c_size_t,
                              *_SHAPE, _int, _int, *_ERR],
    "conv_torch_delta_plan": [*_DELTA_SHAPE, _int, *_PLAN_OUT],
    "conv_torch_delta_frame": [_int, _ptr, _ptr, _ptr, _ptr, _ptr, _ptr, ctypes.c_size_t,
                               *_DELTA_SHAPE, ctypes.c_float, _int, _int, *_ERR],
}


@functools.cache
def library():
    path = os.environ.get("CONV_LESSONS_LIBRARY") or pathlib.Path(__file__).with_name(
        "libconv_torch.so")
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise RuntimeError(f"conv_lessons cannot load its kernels from {path} ({e}); "
                           "install the package with: pip install ./python") from e
    for name, argtypes in _SIGNATURES.items():
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = _int
    lib.conv_torch_conv2d_kernel.argtypes = [_int, ctypes.POINTER(_int), ctypes.POINTER(_int)]
    lib.conv_torch_conv2d_kernel.restype = _str
    return lib


_local = threading.local()


def _error_buffer():
    """The thread's buffer for the library's error line, made once (a new one on every
    call cost a microsecond), emptied before each call."""
    err = getattr(_local, "err", None)
    if err is None:
        err = _local.err = ctypes.create_string_buffer(_ERROR_SIZE)
    err[0] = b"\0"
    return err


# [page: call]
def _call(op, function, *args):
    """function(*args, err, err_size), its status raised as op's exception."""
    err = _error_buffer()
    status = getattr(library(), function)(*args, err, _ERROR_SIZE)
    if status != 0:
        raise _EXCEPTIONS.get(status, RuntimeError)(
            f"conv_lessons.{op}: " + err.value.decode(errors="replace"))
# [/page: call]


def _plan(op, function, *args):
    """(kernel name, bytes) of a plan function."""
    kernel, size = ctypes.c_char_p(), ctypes.c_size_t()
    _call(op, function, *args, ctypes.byref(kernel), ctypes.byref(size))
    return kernel.value.decode(), size.value


@functools.cache
def conv2d_kernels():
    """{name: (dtype, layout)} of every convolution kernel the library has; no GPU needed."""
    dtypes = {code: name for name, code in DTYPES.items()}
    layouts = {code: name for name, code in LAYOUTS.items()}
    kernels, dtype, layout = {}, _int(), _int()
    while (name := library().conv_torch_conv2d_kernel(len(kernels), ctypes.byref(dtype),
                                                      ctypes.byref(layout))) is not None:
        kernels[name.decode()] = (dtypes[dtype.value], layouts[layout.value])
    return kernels


def _name(kernel):
    return None if kernel is None else kernel.encode()


# A plan depends on the device and the problem alone: kept, it spares each call a second
# query of the GPU (exceptions are not kept).
@functools.lru_cache(maxsize=1024)
def conv2d_plan(op, device, kernel, shape, dtype, layout):
    """(kernel name, scratch bytes) of the kernel that runs this problem on device: the
    one named, or the fastest where kernel is None."""
    return _plan(op, "conv_torch_conv2d_plan", device, _name(kernel), *shape, DTYPES[dtype],
                 LAYOUTS[layout])


def conv2d(op, device, stream, kernel, x, weight, bias, scale, y, scratch, scratch_bytes, shape,
           dtype, layout):
    """Enqueues y = conv2d(x, weight) + bias on stream; pointers as integers (0: none)."""
    _call(op, "conv_torch_conv2d", device, stream, _name(kernel), x, weight, bias or None,
          scale or None, y, scratch or None, scratch_bytes, *shape, DTYPES[dtype],
          LAYOUTS[layout])


@functools.lru_cache(maxsize=1024)
def covariance_plan(device, shape, layout, symmetric):
    """(kernel name, scratch bytes)."""
    return _plan("covariance", "conv_torch_covariance_plan", device, *shape,
                 COVARIANCE_LAYOUTS[layout], int(symmetric))


def covariance(device, stream, mu, gamma, c, out, scratch, scratch_bytes, shape, layout,
               symmetric):
    """Enqueues out += the covariance term on stream."""
    _call("covariance", "conv_torch_covariance", device, stream, mu, gamma, c or None, out,
          scratch, scratch_bytes, *shape, COVARIANCE_LAYOUTS[layout], int(symmetric))


def delta_plan(shape, variant):
    """(kernel name, state bytes) of a sequence of frames of shape (h, w, c, ksize, tile);
    no GPU needed."""
    return _plan("DeltaConv2d", "conv_torch_delta_plan", *shape, DELTA_VARIANTS[variant])


def delta_frame(device, stream, frame, weight, bias, out, state, state_bytes, shape, threshold,
                first, variant):
    """Enqueues one frame of the sequence: out and state updated in place."""
    _call("DeltaConv2d", "conv_torch_delta_frame", device, stream, frame, weight, bias, out,
          state, state_bytes, *shape, threshold, int(first), DELTA_VARIANTS[variant])
