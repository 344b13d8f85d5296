"""conv_lessons.conv2d against PyTorch's own convolution, and every input it refuses.

    pip install ./python && pytest python/tests

The GPU tests compare each kernel with torch.nn.functional.conv2d in float64 on the
inputs as their dtype stores them, on the lessons' awkward shapes, with the tolerance of
the lessons' own check (common/measure/verify.c); run torch.library.opcheck and
torch.compile(fullgraph=True); and queue work on side streams. The checks of bad inputs
and of the fake kernel run on the CPU too. Without torch, or without a CUDA GPU for the
GPU tests, they are skipped with the reason."""

import math

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
F = torch.nn.functional

import conv_lessons  # noqa: E402  (after the skip above)
from _fake import assert_fake_raises  # noqa: E402
from _gpu import busy_side_stream, capability, needs_gpu  # noqa: E402

# (dtype, precision, memory format, compute capability x 10 it needs)
FORMATS = {
    "fp32": (torch.float32, None, torch.contiguous_format, 75),
    "tf32": (torch.float32, "tf32", torch.channels_last, 80),
    "3xtf32": (torch.float32, "3xtf32", torch.channels_last, 80),
    "fp16": (torch.float16, None, torch.channels_last, 75),
    "bf16": (torch.bfloat16, None, torch.channels_last, 80),
}

# Unit roundoff of the operands as multiplied, of the accumulator and of the output
# (verify.c), and its safety factors.
UNIT_ROUNDOFF = {
    "fp32": (0.0, 2**-24, 0.0),
    "tf32": (2**-11, 2**-24, 0.0),
    "3xtf32": (2**-21, 2**-24, 0.0),
    "fp16": (0.0, 2**-24, 2**-11),
    "bf16": (0.0, 2**-24, 2**-8),
}
OPERAND_SAFETY, ACCUMULATE_SAFETY = 2.0, 8.0

# (n, cin, cout, h, w, ksize): the lessons' awkward sizes (cmake/lessons.cmake, lesson
# 08's CMakeLists.txt): one pixel, one row or column, primes, filters larger than the
# image, 1x1 and 31x31 filters, channel counts that cross 16-byte chunks and taps.
SINGLE_CHANNEL = [
    (1, 1, 1, 1, 1, 3), (1, 1, 1, 1, 37, 5), (1, 1, 1, 41, 1, 3), (1, 1, 1, 97, 101, 7),
    (3, 1, 1, 33, 65, 5), (1, 1, 1, 5, 6, 15), (1, 1, 1, 40, 50, 31), (1, 1, 1, 17, 19, 1),
    (1, 1, 1, 7, 1031, 9), (2, 1, 1, 37, 64, 7), (1, 1, 1, 3, 4, 15), (2, 1, 1, 300, 260, 17),
]
MULTICHANNEL = [
    (3, 5, 7, 13, 17, 3), (1, 3, 67, 23, 29, 5), (2, 33, 9, 8, 9, 1), (3, 2, 3, 2, 3, 3),
    (3, 24, 200, 11, 13, 3), (1, 16, 40, 9, 7, 5), (2, 64, 72, 5, 6, 1), (1, 32, 33, 7, 7, 3),
    (1, 256, 130, 6, 5, 3), (1, 8, 9, 1, 1, 3), (1, 8, 16, 7, 1031, 9), (1, 72, 9, 40, 50, 31),
    (3, 8, 8, 3, 4, 15), (3, 24, 300, 11, 13, 3), (2, 1, 3, 9, 10, 3), (2, 4, 1, 9, 10, 5),
]
SHAPES = SINGLE_CHANNEL + MULTICHANNEL


def shape_id(shape):
    return "n{}_c{}_k{}_{}x{}_r{}".format(*shape)


def inputs(shape, fmt, bias=True, seed=0, device="cuda"):
    n, cin, cout, h, w, k = shape
    dtype, _, memory_format, _ = FORMATS[fmt]
    g = torch.Generator().manual_seed(seed)

    def draw(*size):
        return (torch.rand(size, generator=g) * 2 - 1).to(dtype)

    x = draw(n, cin, h, w).to(device).contiguous(memory_format=memory_format)
    wt = draw(cout, cin, k, k).to(device).contiguous(memory_format=memory_format)
    b = draw(cout).to(device) if bias else None
    return x, wt, b


def assert_close_to_reference(y, x, w, b, fmt):
    """|y - ref| <= atol + rtol * (|b| + sum |x w|), ref in float64 on the stored inputs."""
    operand_u, accumulate_u, output_u = UNIT_ROUNDOFF[fmt]
    terms = w.shape[1] * w.shape[2] * w.shape[3] + (b is not None)
    rtol = (OPERAND_SAFETY * 2 * operand_u + ACCUMULATE_SAFETY * math.sqrt(terms) * accumulate_u
            + output_u)
    pad = w.shape[2] // 2
    x64, w64 = x.double(), w.double()
    b64 = None if b is None else b.double()
    ref = F.conv2d(x64, w64, b64, padding=pad)
    magnitude = F.conv2d(x64.abs(), w64.abs(), None if b is None else b64.abs(), padding=pad)
    err = (y.double() - ref).abs()
    bad = ~(err <= torch.finfo(torch.float32).tiny + rtol * magnitude)  # NaN fails
    assert not bad.any(), (f"{int(bad.sum())} of {y.numel()} outputs off, max error "
                           f"{err.max().item():.3g}, rtol {rtol:.3g}")


def poison_next_output(x, cout):
    """Frees a NaN-filled block of the output's size just before the call, where the op's
    torch.empty most likely finds it in the caching allocator: an output element the
    kernel does not write stays NaN and fails the check."""
    n, _, h, w = x.shape
    torch.full((n, cout, h, w), float("nan"), dtype=x.dtype, device=x.device)


def skip_unless_gpu_runs(fmt):
    if capability() < FORMATS[fmt][3]:
        pytest.skip(f"{fmt} needs compute capability {FORMATS[fmt][3] / 10}")


# ---- against PyTorch, on the GPU ----

@needs_gpu
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matches_pytorch(shape, fmt):
    skip_unless_gpu_runs(fmt)
    x, w, b = inputs(shape, fmt, bias=shape[3] % 2 == 1)
    poison_next_output(x, shape[2])
    y = conv_lessons.conv2d(x, w, b, precision=FORMATS[fmt][1])
    assert y.dtype == x.dtype and y.shape == (shape[0], shape[2], shape[3], shape[4])
    assert y.is_contiguous(memory_format=FORMATS[fmt][2])
    assert_close_to_reference(y, x, w, b, fmt)


@needs_gpu
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_random_shapes(fmt):
    skip_unless_gpu_runs(fmt)
    g = torch.Generator().manual_seed(7)
    for seed in range(12):
        n, cin, cout = (int(v) for v in torch.randint(1, 9, (3,), generator=g))
        h, w = (int(v) for v in torch.randint(1, 70, (2,), generator=g))
        k = 2 * int(torch.randint(0, 8, (1,), generator=g)) + 1
        if seed % 3 == 0:
            cin, cout = 1, 1  # lesson 05's kernel in fp32
        x, wt, b = inputs((n, cin, cout, h, w, k), fmt, bias=seed % 2 == 0, seed=seed)
        poison_next_output(x, cout)
        y = conv_lessons.conv2d(x, wt, b, precision=FORMATS[fmt][1])
        assert_close_to_reference(y, x, wt, b, fmt)


# Seed 000's naive and tiled kernels, and the fastest by name (single-channel fp32).
NAMED_KERNELS = ["02_gpu_naive/block16x16", "02_gpu_naive/block32x8", "04_shared_tiling/tile_in",
                 "04_shared_tiling/tile_out", "04_shared_tiling/tile_cached_halo",
                 "05_register_tiling/strip_ring"]


@needs_gpu
@pytest.mark.parametrize("kernel", NAMED_KERNELS)
@pytest.mark.parametrize("shape", SINGLE_CHANNEL, ids=shape_id)
def test_named_kernel_matches_pytorch(shape, kernel):
    x, w, b = inputs(shape, "fp32", bias=shape[3] % 2 == 1)
    poison_next_output(x, shape[2])
    y = conv_lessons.conv2d(x, w, b, kernel=kernel)
    assert_close_to_reference(y, x, w, b, "fp32")


@needs_gpu
def test_opcheck_named_kernel():
    x, w, b = inputs((1, 1, 1, 9, 11, 3), "fp32")
    torch.library.opcheck(torch.ops.conv_lessons.conv2d.default,
                          (x, w, b, None, "04_shared_tiling/tile_in"))


@needs_gpu
def test_named_kernel_that_does_not_take_the_shape():
    x, w, _ = inputs((1, 2, 3, 8, 8, 3), "fp32")
    with pytest.raises(NotImplementedError, match="02_gpu_naive/block16x16: single-channel only"):
        conv_lessons.conv2d(x, w, kernel="02_gpu_naive/block16x16")


@needs_gpu
def test_fp32_picks_lesson_05_or_07():
    x, w, _ = inputs((2, 1, 1, 64, 64, 5), "fp32")
    assert conv_lessons.kernel_for(x, w) == "05_register_tiling/strip_ring"
    x, w, _ = inputs((2, 3, 8, 64, 64, 3), "fp32")
    assert conv_lessons.kernel_for(x, w) == "07_multichannel/implicit_gemm_async"


@needs_gpu
def test_view_into_a_larger_tensor():
    """A contiguous view that starts off a 16-byte boundary: the kernels fall back to
    narrower loads (wgmma to its gather kernel) instead of reading misaligned vectors."""
    for fmt, shape in (("fp32", (1, 1, 1, 20, 36, 5)), ("fp32", (1, 4, 8, 20, 36, 3)),
                       ("fp16", (1, 8, 16, 12, 10, 3)), ("fp16", (1, 8, 72, 12, 10, 3))):
        skip_unless_gpu_runs(fmt)
        x, w, b = inputs(shape, fmt)
        n, c, h, wd = x.shape
        big = torch.empty(x.numel() + 1, dtype=x.dtype, device="cuda")
        if fmt == "fp32":
            shifted = big[1:].view(n, c, h, wd)
        else:  # channels_last: NHWC memory seen as NCHW
            shifted = big[1:].view(n, h, wd, c).permute(0, 3, 1, 2)
        shifted.copy_(x)
        y = conv_lessons.conv2d(shifted, w, b)
        assert_close_to_reference(y, x, w, b, fmt)


@needs_gpu
def test_empty_batch():
    x, w, b = inputs((0, 3, 4, 5, 5, 3), "fp32")
    assert conv_lessons.conv2d(x, w, b).shape == (0, 4, 5, 5)


# ---- PyTorch's own checks of a custom op ----

@needs_gpu
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("shape", [(1, 1, 1, 9, 11, 3), (2, 8, 16, 7, 9, 3)], ids=shape_id)
def test_opcheck(shape, fmt):
    skip_unless_gpu_runs(fmt)
    x, w, b = inputs(shape, fmt)
    torch.library.opcheck(torch.ops.conv_lessons.conv2d.default, (x, w, b, FORMATS[fmt][1]))
    torch.library.opcheck(torch.ops.conv_lessons.conv2d.default, (x, w, None, FORMATS[fmt][1]))


@needs_gpu
@pytest.mark.parametrize("fmt", ["fp32", "fp16"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 40, 48, 5), (2, 16, 32, 12, 10, 3)], ids=shape_id)
def test_compile_without_graph_break(shape, fmt):
    skip_unless_gpu_runs(fmt)
    x, w, b = inputs(shape, fmt)
    precision = FORMATS[fmt][1]

    def layer(x, w, b):
        return torch.relu(conv_lessons.conv2d(x * 2, w, b, precision=precision)) + 1

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True)
    expected = layer(x, w, b)
    torch.testing.assert_close(compiled(x, w, b), expected, rtol=0, atol=0)


# ---- the eager path: conv_lessons.conv2d without the dispatcher, where nothing sees it ----

@needs_gpu
def test_eager_call_is_the_op():
    """conv_lessons.conv2d runs the op's implementation itself on plain CUDA tensors, and
    hands the call to torch.ops wherever something must see the op: autograd (whose
    backward raises the forward-only error) and the profiler (which names the op)."""
    from conv_lessons._launch import runs_eagerly

    x, w, b = inputs((2, 8, 16, 12, 10, 3), "fp32")
    assert runs_eagerly((x, w, b))
    torch.testing.assert_close(conv_lessons.conv2d(x, w, b),
                               torch.ops.conv_lessons.conv2d(x, w, b, None, None), rtol=0, atol=0)
    w.requires_grad_()
    assert not runs_eagerly((x, w, b))
    y = conv_lessons.conv2d(x, w, b)
    assert y.grad_fn is not None
    with pytest.raises(NotImplementedError, match="conv2d is forward only"):
        y.sum().backward()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        conv_lessons.conv2d(x, w.detach(), b)
    assert "conv_lessons::conv2d" in {e.name for e in prof.events()}


@needs_gpu
def test_eager_call_refuses_as_the_op():
    """A signature that passed before, then the same shapes with other strides: checked
    anew, refused; and the refused call refused again."""
    x, w, b = inputs((1, 4, 8, 9, 11, 3), "fp32")
    conv_lessons.conv2d(x, w, b)
    other = x.contiguous(memory_format=torch.channels_last)
    for _ in range(2):
        with pytest.raises(ValueError, match="x must be contiguous"):
            conv_lessons.conv2d(other, w, b)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
def test_another_device_leaves_the_current_one():
    """x on cuda:1 while cuda:0 is current: the result is right, and cuda:0 is current
    after the call (the library selects cuda:1 for its launch; the guard restores)."""
    torch.cuda.set_device(0)
    x, w, b = (t.to("cuda:1") for t in inputs((1, 4, 8, 9, 11, 3), "fp32"))
    y = conv_lessons.conv2d(x, w, b)
    assert y.device == x.device and torch.cuda.current_device() == 0
    assert_close_to_reference(y, x, w, b, "fp32")


# ---- streams ----


@needs_gpu
@pytest.mark.parametrize("fmt", ["fp32", "fp16"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 300, 400, 7), (2, 16, 32, 40, 30, 3)], ids=shape_id)
def test_side_stream_with_queued_work(shape, fmt):
    """The inputs are still being written on a busy side stream when the op is called
    there: a kernel on any other stream, or filter copies that do not wait for it, would
    read them unwritten."""
    skip_unless_gpu_runs(fmt)
    x, w, b = inputs(shape, fmt)
    side = busy_side_stream()
    with torch.cuda.stream(side):
        x2, w2 = x * 2, w * 0.5
        y = conv_lessons.conv2d(x2, w2, b, precision=FORMATS[fmt][1])
    torch.cuda.current_stream().wait_stream(side)
    assert_close_to_reference(y, x * 2, w * 0.5, b, fmt)


@needs_gpu
@pytest.mark.parametrize("kernels", [(None, None),
                                     ("04_shared_tiling/tile_out", "04_shared_tiling/tile_in"),
                                     ("04_shared_tiling/tile_cached_halo", None)])
def test_single_channel_filters_on_two_streams(kernels):
    """Lessons 04 and 05 keep the filter in constant memory: the second call's filter must
    not reach the first call's kernel, still waiting behind a sleep on its own stream."""
    x, w1, b = inputs((1, 1, 1, 200, 300, 5), "fp32")
    w2 = -2 * w1
    first, second = busy_side_stream(), torch.cuda.Stream()
    second.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(first):
        y1 = conv_lessons.conv2d(x, w1, b, kernel=kernels[0])
    with torch.cuda.stream(second):
        y2 = conv_lessons.conv2d(x, w2, None, kernel=kernels[1])
    for s in (first, second):
        torch.cuda.current_stream().wait_stream(s)
    assert_close_to_reference(y1, x, w1, b, "fp32")
    assert_close_to_reference(y2, x, w2, None, "fp32")


# ---- what it refuses, on the GPU ----

@needs_gpu
def test_inputs_on_two_devices():
    x, w, _ = inputs((1, 2, 3, 8, 8, 3), "fp32")
    with pytest.raises(ValueError, match=r"weight is on cpu but x is on cuda:0: conv_lessons."
                                         r"conv2d takes all its tensors on one CUDA device "
                                         r"\(move it with weight.to\(x.device\)\)"):
        conv_lessons.conv2d(x, w.cpu())
    with pytest.raises(ValueError, match=r"bias is on cpu but x is on cuda:0: .*bias.to\(x"):
        conv_lessons.conv2d(x, w, torch.zeros(3))


@needs_gpu
def test_wrong_memory_format():
    x, w, _ = inputs((1, 4, 8, 8, 8, 3), "fp16")
    with pytest.raises(ValueError, match=r"x must be channels_last"):
        conv_lessons.conv2d(x.contiguous(), w)
    x, w, _ = inputs((1, 4, 8, 8, 8, 3), "fp32")
    with pytest.raises(ValueError, match=r"x must be contiguous"):
        conv_lessons.conv2d(x.contiguous(memory_format=torch.channels_last), w)
    with pytest.raises(ValueError, match=r"x must be contiguous"):
        conv_lessons.conv2d(x[:, :, :, ::2], w)


@needs_gpu
def test_gpu_too_old_for_the_dtype():
    if capability() >= 80:
        pytest.skip("bf16 runs on this GPU")
    x, w, _ = inputs((1, 4, 8, 8, 8, 3), "bf16")
    with pytest.raises(NotImplementedError, match="compute capability 8.0"):
        conv_lessons.conv2d(x, w)


# ---- what it refuses, on the CPU too ----

def cpu_inputs(n=1, cin=2, cout=3, h=8, w=8, k=3, dtype=torch.float32):
    return torch.randn(n, cin, h, w, dtype=dtype), torch.randn(cout, cin, k, k, dtype=dtype)


def test_cpu_tensor():
    x, w = cpu_inputs()
    with pytest.raises(ValueError, match=r"x is on cpu: .*CUDA tensors \(move it with x.cuda"):
        conv_lessons.conv2d(x, w)


def test_tensors_on_two_devices_without_a_gpu():
    """x on meta stands for x on a GPU: a tensor elsewhere is named with the move that puts
    it beside x (weight.cuda() would go to the current device, which need not be x's)."""
    x, w = cpu_inputs()
    with pytest.raises(ValueError, match=r"weight is on cpu but x is on meta: conv_lessons.conv2d "
                                         r"takes .* \(move it with weight.to\(x.device\)\)"):
        conv_lessons.conv2d(meta(x), w)
    with pytest.raises(ValueError, match=r"bias is on cpu but x is on meta: .*bias.to\(x.device"):
        conv_lessons.conv2d(meta(x), meta(w), torch.zeros(3))


BAD_CALLS = [
    # (what, keyword arguments, exception, message)
    ("stride 2", dict(stride=2), NotImplementedError, "stride=2: .* stride 1 only"),
    ("stride (1, 2)", dict(stride=(1, 2)), NotImplementedError, "stride 1 only"),
    ("dilation", dict(dilation=2), NotImplementedError, "dilation=2"),
    ("groups", dict(groups=2), NotImplementedError, "groups=2"),
    ("padding 0", dict(padding=0), NotImplementedError, r"padding=0: .*'same' only \(padding=1"),
    ("padding valid", dict(padding="valid"), NotImplementedError, "padding='valid'"),
    ("bad precision", dict(precision="fp64"), ValueError, "precision='fp64'"),
]


@pytest.mark.parametrize("what, kwargs, exception, message", BAD_CALLS,
                         ids=[c[0] for c in BAD_CALLS])
def test_bad_options(what, kwargs, exception, message):
    x, w = (t.to("meta") for t in cpu_inputs())
    with pytest.raises(exception, match=message):
        conv_lessons.conv2d(x, w, **kwargs)


def test_padding_k_over_2_is_same():
    x, w = (t.to("meta") for t in cpu_inputs(k=5))
    assert conv_lessons.conv2d(x, w, padding=2).shape == (1, 3, 8, 8)
    assert conv_lessons.conv2d(x, w, padding=(2, 2)).shape == (1, 3, 8, 8)


def meta(x, memory_format=torch.contiguous_format):
    return x.to("meta").contiguous(memory_format=memory_format)


BAD_TENSORS = [
    # (what, x, weight, bias, precision, exception, message)
    ("even filter", (1, 2, 8, 8), (3, 2, 4, 4), None, None, NotImplementedError,
     "4x4 filter: .* odd"),
    ("non-square filter", (1, 2, 8, 8), (3, 2, 3, 5), None, None, NotImplementedError,
     "3x5 filter: .* square"),
    ("33x33 filter", (1, 2, 8, 8), (3, 2, 33, 33), None, None, NotImplementedError,
     "1x1 to 31x31"),
    ("channels differ", (1, 2, 8, 8), (3, 4, 3, 3), None, None, ValueError,
     "weight has 4 input channels but x has 2"),
    ("3-D x", (2, 8, 8), (3, 2, 3, 3), None, None, ValueError, "must be 4-D"),
    ("no channels", (1, 0, 8, 8), (3, 0, 3, 3), None, None, ValueError, "0 channels"),
    ("bias shape", (1, 2, 8, 8), (3, 2, 3, 3), (4,), None, ValueError, r"it must be \(3,\)"),
    ("precision for fp16", (1, 2, 8, 8), (3, 2, 3, 3), None, "tf32", ValueError,
     "leave precision out"),
]


@pytest.mark.parametrize("what, x_shape, w_shape, b_shape, precision, exception, message",
                         BAD_TENSORS, ids=[c[0] for c in BAD_TENSORS])
def test_bad_tensors(what, x_shape, w_shape, b_shape, precision, exception, message):
    dtype = torch.float16 if what == "precision for fp16" else torch.float32
    memory_format = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
    x = torch.empty(x_shape, dtype=dtype, device="meta")
    if x.dim() == 4:
        x = x.contiguous(memory_format=memory_format)
    w = torch.empty(w_shape, dtype=dtype, device="meta").contiguous(memory_format=memory_format)
    b = None if b_shape is None else torch.empty(b_shape, dtype=dtype, device="meta")
    with pytest.raises(exception, match=message):
        conv_lessons.conv2d(x, w, b, precision=precision)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.complex64])
def test_dtype_without_kernel(dtype):
    x, w = (meta(t.to(dtype)) for t in cpu_inputs())
    with pytest.raises(TypeError, match=f"x is {dtype}; .*float32, float16 or bfloat16"):
        conv_lessons.conv2d(x, w)


def test_not_tensors():
    x, w = (meta(t) for t in cpu_inputs())
    with pytest.raises(TypeError, match="x is a list, not a torch.Tensor"):
        conv_lessons.conv2d([1.0], w)
    with pytest.raises(TypeError, match="bias is a float"):
        conv_lessons.conv2d(x, w, 0.5)
    with pytest.raises(TypeError, match="precision=32: give the string"):
        conv_lessons.conv2d(x, w, precision=32)


def test_dtypes_differ():
    x, w = cpu_inputs()
    with pytest.raises(TypeError, match="weight is torch.float16 but x is torch.float32"):
        conv_lessons.conv2d(meta(x), meta(w.half()))
    with pytest.raises(TypeError, match="bias is torch.float16"):
        conv_lessons.conv2d(meta(x), meta(w), torch.zeros(3, dtype=torch.float16, device="meta"))


def test_memory_format_on_meta():
    x, w = cpu_inputs(dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="x must be channels_last .* for bfloat16"):
        conv_lessons.conv2d(meta(x), meta(w, torch.channels_last))
    with pytest.raises(ValueError, match="weight must be channels_last"):
        conv_lessons.conv2d(meta(x, torch.channels_last), meta(w))
    x, w = cpu_inputs()
    with pytest.raises(ValueError, match="x must be channels_last .* precision 'tf32'"):
        conv_lessons.conv2d(meta(x), meta(w), precision="tf32")


def test_too_large_for_32_bit_indexing():
    x = torch.empty(1, 1, 50_000, 50_000, device="meta")
    w = torch.empty(1, 1, 3, 3, device="meta")
    with pytest.raises(NotImplementedError, match="2\\^31-1 elements"):
        conv_lessons.conv2d(x, w)


# ---- the fake kernel, without a GPU ----

@pytest.mark.parametrize("fmt", list(FORMATS))
def test_fake_kernel_output(fmt):
    from torch._subclasses.fake_tensor import FakeTensorMode

    dtype, precision, memory_format, _ = FORMATS[fmt]
    with FakeTensorMode():
        x = torch.empty(2, 8, 13, 17, dtype=dtype, device="cuda").contiguous(
            memory_format=memory_format)
        w = torch.empty(5, 8, 3, 3, dtype=dtype, device="cuda").contiguous(
            memory_format=memory_format)
        b = torch.empty(5, dtype=dtype, device="cuda")
        y = conv_lessons.conv2d(x, w, b, precision=precision)
    assert y.shape == (2, 5, 13, 17) and y.dtype == dtype and y.device.type == "cuda"
    assert y.is_contiguous(memory_format=memory_format)


def test_fake_kernel_raises_as_the_real_one():
    assert_fake_raises(torch.ops.conv_lessons.conv2d, [(1, 2, 8, 8), (3, 2, 4, 4), None, None],
                       NotImplementedError, "4x4 filter")


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_compile_traces_without_a_gpu(fmt, dynamic):
    """torch.compile(fullgraph=True) traces the op through its fake kernel: no graph break,
    at a second size too. There torch.compile turns symbolic sizes on by itself, and x * 2,
    made in the graph, must still pass the memory-format check (PyTorch 2.11 said a
    channels_last tensor made there was not one)."""
    dtype, precision, memory_format, _ = FORMATS[fmt]
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, w: torch.relu(conv_lessons.conv2d(
        x * 2, w, precision=precision)), fullgraph=True, backend="eager", dynamic=dynamic)
    for h, w in ((8, 8), (9, 13)):
        x, wt = (meta(t, memory_format) for t in cpu_inputs(h=h, w=w, dtype=dtype))
        y = compiled(x, wt)
        assert y.shape == (1, 3, h, w) and y.dtype == dtype
        assert y.is_contiguous(memory_format=memory_format)


def test_backward_raises():
    x, w = cpu_inputs()
    x, w = meta(x), meta(w).requires_grad_()
    y = conv_lessons.conv2d(x, w)
    with pytest.raises(NotImplementedError, match="forward only: .*torch.no_grad()"):
        y.sum().backward()


def test_checks_kept_per_signature():
    """check_inputs_again, the eager path's checks: a call like one that passed passes
    from the look-up; one whose strides, precision or dtype differ is checked anew; one
    that raised raises again."""
    from conv_lessons import _checks

    x, w = (meta(t) for t in cpu_inputs())
    for _ in range(2):
        assert _checks.check_inputs_again(x, w, None, None) == _checks.Format("fp32", "nchw")
    for _ in range(2):
        with pytest.raises(ValueError, match="x must be contiguous"):
            _checks.check_inputs_again(meta(x, torch.channels_last), w, None, None)
        with pytest.raises(ValueError, match="x must be channels_last"):
            _checks.check_inputs_again(x, w, None, "tf32")
        with pytest.raises(TypeError, match="weight is torch.float16"):
            _checks.check_inputs_again(x, w.half(), None, None)


def test_eager_path_leaves_to_the_op():
    """Where the dispatcher must see the call, conv_lessons.conv2d hands it to torch.ops:
    tensors that are not on CUDA (the op's own errors), fake tensors, modes."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from conv_lessons._launch import runs_eagerly

    x, w = cpu_inputs()
    assert not runs_eagerly((x, w, None))
    assert not runs_eagerly((meta(x), meta(w), None))
    with FakeTensorMode():
        fake = torch.empty(1, 2, 8, 8, device="cuda")
        assert not runs_eagerly((fake,))


# ---- kernel=, without a GPU ----

def test_kernel_names():
    names = conv_lessons.conv2d_kernels()
    assert set(NAMED_KERNELS) | {"07_multichannel/implicit_gemm_async"} <= set(names)
    assert "08_tensor_cores/mma_fp16" in conv_lessons.conv2d_kernels("fp16", "nhwc")


BAD_KERNELS = [
    # (what, kernel, dtype, exception, message)
    ("unknown", "02_gpu_naive/nope", torch.float32, ValueError,
     "kernel='02_gpu_naive/nope': one of .*02_gpu_naive/block16x16"),
    ("other dtype", "02_gpu_naive/block16x16", torch.float16, ValueError,
     "runs fp32 in the nchw layout; this call is fp16 in nhwc"),
    ("not a string", 3, torch.float32, TypeError, "kernel=3: give a kernel's name"),
]


@pytest.mark.parametrize("what, kernel, dtype, exception, message", BAD_KERNELS,
                         ids=[k[0] for k in BAD_KERNELS])
def test_bad_kernel(what, kernel, dtype, exception, message):
    memory_format = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
    x, w = (meta(t, memory_format) for t in cpu_inputs(cin=1, cout=1, dtype=dtype))
    with pytest.raises(exception, match=message):
        conv_lessons.conv2d(x, w, kernel=kernel)


def test_meta_tensors_give_the_shape():
    x, w = (meta(t) for t in cpu_inputs(n=2, cin=3, cout=4, h=5, w=6, k=5))
    y = conv_lessons.conv2d(x, w)
    assert y.device.type == "meta" and y.shape == (2, 4, 5, 6)
