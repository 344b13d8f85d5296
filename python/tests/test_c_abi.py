"""libconv_torch.so's convolution C ABI (python/src/conv_torch.h) called directly: every
bad argument gets its status and one line, and the process goes on. Without a GPU the
valid calls report CUDA's error instead of running. (The covariance and delta ABIs are
tested beside their ops.)

    CONV_LESSONS_LIBRARY=build-py/python/libconv_torch.so pytest python/tests/test_c_abi.py
"""

import ctypes

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

from _gpu import needs_gpu  # noqa: E402  (after the skip above)

OK, BAD_ARGUMENT, UNSUPPORTED, CUDA_ERROR = 0, 1, 2, 3
FP32, FP16, BINARY, NCHW, NHWC = 0, 3, 5, 0, 1


def plan(lib, shape, dtype=FP32, layout=NCHW, device=0, name=None):
    kernel, scratch = ctypes.c_char_p(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_conv2d_plan(device, name, *shape, dtype, layout,
                                        ctypes.byref(kernel), ctypes.byref(scratch), err,
                                        len(err))
    return status, err.value.decode(), kernel.value, scratch.value


def run(lib, shape, x=16, w=16, b=None, y=16, dtype=FP32, layout=NCHW, scale=None, name=None):
    """conv_torch_conv2d on fake addresses: it must refuse before touching them."""
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_conv2d(0, None, name, x, w, b, scale, y, None, 0, *shape, dtype,
                                   layout, err, len(err))
    return status, err.value.decode()


BAD_PLANS = [
    # (what, n, cin, cout, h, w, ksize, dtype, layout, status, message)
    ("even ksize", (1, 1, 1, 8, 8, 4), FP32, NCHW, BAD_ARGUMENT, "ksize 4: an odd filter size"),
    ("ksize 33", (1, 1, 1, 8, 8, 33), FP32, NCHW, BAD_ARGUMENT, "from 1 to 31"),
    ("ksize 0", (1, 1, 1, 8, 8, 0), FP32, NCHW, BAD_ARGUMENT, "ksize 0"),
    ("no channels", (1, 0, 1, 8, 8, 3), FP32, NCHW, BAD_ARGUMENT, "cin must be at least 1"),
    ("negative height", (1, 1, 1, -8, 8, 3), FP32, NCHW, BAD_ARGUMENT, "not negative"),
    ("dtype 6", (1, 1, 1, 8, 8, 3), 6, NCHW, BAD_ARGUMENT, "dtype 6: 0 fp32, 1 tf32"),
    ("layout 2", (1, 1, 1, 8, 8, 3), FP32, 2, BAD_ARGUMENT, "layout 2"),
    ("2^31 elements", (1, 1, 1, 50000, 50000, 3), FP32, NCHW, UNSUPPORTED, "2^31-1 elements"),
]


@pytest.mark.parametrize("what, shape, dtype, layout, status, message", BAD_PLANS,
                         ids=[p[0] for p in BAD_PLANS])
def test_bad_plan(lib, what, shape, dtype, layout, status, message):
    got, err, _, _ = plan(lib, shape, dtype, layout)
    assert got == status and message in err


def test_bad_device(lib):
    status, err, _, _ = plan(lib, (1, 1, 1, 8, 8, 3), device=999)
    if torch.cuda.is_available():
        assert status == BAD_ARGUMENT and err.startswith("device 999: CUDA sees")
    else:
        assert status == CUDA_ERROR


BAD_RUNS = [
    # (what, keyword arguments of run, message)
    ("null input", dict(x=None), "a NULL input"),
    ("null output", dict(y=None), "a NULL input, weights or output"),
    ("misaligned input", dict(x=18), "not aligned to its element (4 bytes)"),
    ("misaligned bias", dict(b=2), "not aligned"),
    ("misaligned output", dict(y=20), "output is not 16-byte aligned"),
    ("fp16 input", dict(x=17, dtype=FP16, layout=NHWC), "(2 bytes)"),
    ("misaligned scale", dict(scale=18, dtype=BINARY, layout=NHWC), "bias or scale not aligned"),
    ("binary without scale", dict(dtype=BINARY, layout=NHWC), "binary, alone: give cout floats"),
    ("scale for fp32", dict(scale=16), "binary, alone: give NULL"),
]


@pytest.mark.parametrize("what, kwargs, message", BAD_RUNS, ids=[r[0] for r in BAD_RUNS])
def test_bad_run(lib, what, kwargs, message):
    status, err = run(lib, (1, 2, 3, 8, 8, 3), **kwargs)
    assert status == BAD_ARGUMENT and message in err


def test_empty_output_launches_nothing(lib):
    assert run(lib, (0, 2, 3, 8, 8, 3), x=None, w=None, y=None) == (OK, "")


def test_valid_plan(lib):
    status, err, kernel, scratch = plan(lib, (2, 3, 8, 16, 16, 3))
    if not torch.cuda.is_available():
        assert status == CUDA_ERROR and err.startswith("CUDA: cudaGetDeviceCount failed")
        return
    assert status == OK and kernel == b"07_multichannel/implicit_gemm_async" and scratch > 0


def test_kernel_list(lib):
    """Every kernel the table has, with its dtype and layout, without a GPU."""
    kernels, dtype, layout = {}, ctypes.c_int(), ctypes.c_int()
    while (name := lib.conv_torch_conv2d_kernel(len(kernels), ctypes.byref(dtype),
                                                ctypes.byref(layout))) is not None:
        kernels[name] = (dtype.value, layout.value)
    assert kernels[b"02_gpu_naive/block16x16"] == (FP32, NCHW)
    assert kernels[b"04_shared_tiling/tile_in"] == (FP32, NCHW)
    assert kernels[b"09_binary/pack_bmma_and"] == (BINARY, NHWC)
    assert lib.conv_torch_conv2d_kernel(-1, ctypes.byref(dtype), ctypes.byref(layout)) is None


NAMED = [
    # (what, name, shape, dtype, layout, message)
    ("unknown name", b"02_gpu_naive/nope", (1, 1, 1, 8, 8, 3), FP32, NCHW,
     'no kernel is called "02_gpu_naive/nope"'),
    ("other format", b"02_gpu_naive/block16x16", (1, 1, 1, 8, 8, 3), FP16, NHWC,
     "02_gpu_naive/block16x16 runs fp32 in the nchw layout, not fp16 in nhwc"),
    ("multichannel naive", b"04_shared_tiling/tile_in", (1, 2, 1, 8, 8, 3), FP32, NCHW,
     "04_shared_tiling/tile_in: single-channel only"),
]


@pytest.mark.parametrize("what, name, shape, dtype, layout, message", NAMED,
                         ids=[n[0] for n in NAMED])
@needs_gpu
def test_named_kernel_refused(lib, what, name, shape, dtype, layout, message):
    status, err, _, _ = plan(lib, shape, dtype, layout, name=name)
    assert status == UNSUPPORTED and message in err


@needs_gpu
def test_named_kernel_plan(lib):
    status, err, kernel, scratch = plan(lib, (1, 1, 1, 64, 64, 3), name=b"04_shared_tiling/tile_in")
    assert (status, kernel) == (OK, b"04_shared_tiling/tile_in") and scratch == 4


@needs_gpu
def test_layout_without_kernel(lib):
    status, err, _, _ = plan(lib, (1, 2, 3, 8, 8, 3), FP32, NHWC)
    assert status == UNSUPPORTED and "no fp32 kernel in the nhwc layout" in err


def test_each_error_its_own_line(lib):
    """The package's calls share one error buffer a thread (_library._call): a second
    failing call says its own error, not the first one's."""
    from conv_lessons import _library

    for shape, message in (((0, 2, 2, 8, 8, 3), "b=0 ci=2 co=2 h=8 w=8: each at least 1"),
                           ((1, 2, 2, 8, 8, 2), "ksize 2: an odd window")):
        with pytest.raises(ValueError, match=rf"^conv_lessons.covariance: .*{message}"):
            _library.covariance_plan(0, shape, "seed", False)
