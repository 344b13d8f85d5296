"""conv_lessons.binary_conv2d (lesson 09) against PyTorch's float64 convolution of the
signs, and every input it refuses.

    pip install ./python && pytest python/tests/test_binary_conv2d.py

The GPU tests run each kernel the GPU can (the bit tensor cores' pack_bmma_and from
compute capability 8.0, packed_xnor everywhere) on lesson 09's awkward shapes and random
ones, torch.library.opcheck, torch.compile(fullgraph=True) and a busy side stream. The
checks of bad inputs and of the fake kernel run without a GPU."""

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
F = torch.nn.functional

import conv_lessons  # noqa: E402  (after the skip above)
from _fake import assert_fake_raises  # noqa: E402
from _gpu import busy_side_stream, capability, needs_gpu  # noqa: E402

# (kernel, compute capability x 10 it needs)
KERNELS = {"09_binary/pack_bmma_and": 80, "09_binary/packed_xnor": 75}
# The output is alpha * (an exact integer) + bias in one fmaf; alpha is a float32 mean of
# C k^2 values (relative error a few 2^-24): well inside this.
RTOL = 1e-5

# (n, cin, cout, h, w, ksize): lesson 09's awkward sizes (its CMakeLists.txt): channel
# counts around a word and not a multiple of 8 words, output channels that fill no tile,
# 1x1, 5x5 and 7x7 filters, images smaller than the filter, batches of 1 and 3; and the
# largest filter, one output channel, a prime-sized image.
SHAPES = [
    (3, 1, 5, 9, 11, 3), (1, 31, 70, 12, 10, 3), (3, 33, 65, 7, 9, 3), (1, 100, 129, 11, 13, 3),
    (1, 256, 97, 10, 9, 3), (1, 512, 40, 6, 7, 5), (3, 64, 72, 5, 6, 1), (1, 40, 33, 9, 7, 5),
    (1, 96, 20, 2, 3, 5), (3, 32, 8, 1, 1, 7), (1, 35, 9, 40, 50, 31), (2, 64, 1, 37, 41, 3),
]


def shape_id(shape):
    return "n{}_c{}_k{}_{}x{}_r{}".format(*shape)


def inputs(shape, bias=True, seed=0, device="cuda"):
    """Real values with exact zeros among them (sign(0) = +1), channels_last."""
    n, cin, cout, h, w, k = shape
    g = torch.Generator().manual_seed(seed)

    def draw(*size):
        v = torch.rand(size, generator=g) * 2 - 1
        return torch.where(torch.rand(size, generator=g) < 0.05, 0.0, v)

    x = draw(n, cin, h, w).to(device).contiguous(memory_format=torch.channels_last)
    wt = draw(cout, cin, k, k).to(device).contiguous(memory_format=torch.channels_last)
    b = draw(cout).to(device) if bias else None
    return x, wt, b


def signs(t):
    """The lesson's binarisation in float64: +1 where t >= 0, -1 below (NaN: -1)."""
    return torch.where(t >= 0, 1.0, -1.0).double()


def assert_close_to_reference(y, x, w, b):
    alpha = w.double().abs().mean(dim=(1, 2, 3)).view(1, -1, 1, 1)
    total = F.conv2d(signs(x), signs(w), padding=w.shape[2] // 2)  # exact integers
    bias = 0 if b is None else b.double().view(1, -1, 1, 1)
    ref = alpha * total + bias
    magnitude = (alpha * total).abs() + (bias.abs() if b is not None else 0)
    err = (y.double() - ref).abs()
    bad = ~(err <= torch.finfo(torch.float32).tiny + RTOL * magnitude)  # NaN fails
    assert not bad.any(), (f"{int(bad.sum())} of {y.numel()} outputs off, max error "
                           f"{err.max().item():.3g}")


def skip_unless_gpu_runs(kernel):
    if capability() < KERNELS[kernel]:
        pytest.skip(f"{kernel} needs compute capability {KERNELS[kernel] / 10}")


def poison_next_output(x, cout):
    """A NaN block of the output's size freed just before the call, where the op's
    torch.empty most likely finds it: an output the kernel does not write fails."""
    n, _, h, w = x.shape
    torch.full((n, cout, h, w), float("nan"), device=x.device)


# ---- against PyTorch, on the GPU ----

@needs_gpu
@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matches_pytorch(shape, kernel):
    skip_unless_gpu_runs(kernel)
    x, w, b = inputs(shape, bias=shape[0] != 3)
    poison_next_output(x, shape[2])
    try:
        y = conv_lessons.binary_conv2d(x, w, b, kernel=kernel)
    except NotImplementedError as e:  # the bit tensor cores' shared memory at 31x31
        assert kernel == "09_binary/pack_bmma_and" and "shared memory" in str(e)
        return
    assert y.dtype == torch.float32 and y.shape == (shape[0], shape[2], shape[3], shape[4])
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert_close_to_reference(y, x, w, b)


@needs_gpu
def test_random_shapes():
    g = torch.Generator().manual_seed(9)
    for seed in range(12):
        n, h, w = (int(v) for v in torch.randint(1, 30, (3,), generator=g))
        cin, cout = (int(v) for v in torch.randint(1, 300, (2,), generator=g))
        k = 2 * int(torch.randint(0, 4, (1,), generator=g)) + 1
        x, wt, b = inputs((n % 4 + 1, cin, cout, h, w, k), bias=seed % 2 == 0, seed=seed)
        poison_next_output(x, cout)
        assert_close_to_reference(conv_lessons.binary_conv2d(x, wt, b), x, wt, b)


@needs_gpu
def test_default_is_the_fastest_the_gpu_runs():
    """Both kernels compute alpha * (an exact sum) + bias with one fmaf: the same bits."""
    x, w, b = inputs((2, 96, 80, 14, 14, 3))
    fastest = "09_binary/pack_bmma_and" if capability() >= 80 else "09_binary/packed_xnor"
    assert torch.equal(conv_lessons.binary_conv2d(x, w, b),
                       conv_lessons.binary_conv2d(x, w, b, kernel=fastest))


@needs_gpu
def test_view_into_a_larger_tensor():
    """An input that starts off a 16-byte boundary: the packing reads it float by float."""
    x, w, b = inputs((1, 40, 16, 9, 11, 3))
    big = torch.empty(x.numel() + 1, device="cuda")
    shifted = big[1:].view(1, 9, 11, 40).permute(0, 3, 1, 2)
    shifted.copy_(x)
    assert_close_to_reference(conv_lessons.binary_conv2d(shifted, w, b), x, w, b)


@needs_gpu
def test_nan_and_signed_zero():
    """sign(-0.0) = +1 and sign(NaN) = -1, as the lesson's packing (x >= 0) has them."""
    x, w, b = inputs((1, 33, 8, 6, 7, 3))
    x[0, 0, 0, 0], x[0, 1, 2, 3], w[0, 0, 1, 1] = float("nan"), -0.0, -0.0
    assert_close_to_reference(conv_lessons.binary_conv2d(x, w, b), x, w, b)


@needs_gpu
def test_empty_batch():
    x, w, b = inputs((0, 32, 4, 5, 5, 3))
    assert conv_lessons.binary_conv2d(x, w, b).shape == (0, 4, 5, 5)


@needs_gpu
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_opcheck(kernel):
    skip_unless_gpu_runs(kernel)
    x, w, b = inputs((2, 40, 24, 7, 9, 3))
    op = torch.ops.conv_lessons.binary_conv2d.default
    torch.library.opcheck(op, (x, w, b, kernel))
    torch.library.opcheck(op, (x, w, None, None))


@needs_gpu
def test_compile_without_graph_break():
    x, w, b = inputs((2, 64, 32, 12, 10, 3))

    def layer(x, w, b):
        return torch.relu(conv_lessons.binary_conv2d(x * 2, w, b)) + 1

    torch._dynamo.reset()
    compiled = torch.compile(layer, fullgraph=True)
    torch.testing.assert_close(compiled(x, w, b), layer(x, w, b), rtol=0, atol=0)


@needs_gpu
def test_side_stream_with_queued_work():
    """The signs and weights are still being written on a busy side stream when the op
    is called there: packing or alpha on any other stream would read them unwritten."""
    x, w, b = inputs((2, 64, 48, 40, 30, 3))
    side = busy_side_stream()
    with torch.cuda.stream(side):
        x2, w2 = -x, w * 3
        y = conv_lessons.binary_conv2d(x2, w2, b)
    torch.cuda.current_stream().wait_stream(side)
    assert_close_to_reference(y, -x, w * 3, b)


@needs_gpu
def test_inputs_on_two_devices():
    x, w, _ = inputs((1, 8, 4, 6, 6, 3))
    with pytest.raises(ValueError, match=r"weight is on cpu but x is on cuda:0: conv_lessons."
                                         r"binary_conv2d takes all its tensors on one CUDA "
                                         r"device \(move it with weight.to\(x.device\)\)"):
        conv_lessons.binary_conv2d(x, w.cpu())


# ---- what it refuses, without a GPU ----

def meta(shape, dtype=torch.float32, memory_format=torch.channels_last):
    t = torch.empty(shape, dtype=dtype, device="meta")
    return t.contiguous(memory_format=memory_format) if t.dim() == 4 else t


def test_cpu_tensor():
    x = torch.randn(1, 8, 6, 6).contiguous(memory_format=torch.channels_last)
    w = torch.randn(4, 8, 3, 3).contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError, match=r"x is on cpu: conv_lessons.binary_conv2d runs on CUDA"):
        conv_lessons.binary_conv2d(x, w)


BAD_CALLS = [
    # (what, x, weight, bias, keyword arguments, exception, message)
    ("float16 x", meta((1, 8, 6, 6), torch.float16), meta((4, 8, 3, 3), torch.float16), None, {},
     TypeError, r"x is torch.float16; conv_lessons.binary_conv2d takes float32 \(call x.float"),
    ("float16 weight", meta((1, 8, 6, 6)), meta((4, 8, 3, 3), torch.float16), None, {},
     TypeError, "weight is torch.float16 but x is torch.float32"),
    ("NCHW x", meta((1, 8, 6, 6), memory_format=torch.contiguous_format), meta((4, 8, 3, 3)),
     None, {}, ValueError, r"x must be channels_last \(NHWC\) for binary_conv2d: call x.contig"),
    ("NCHW weight", meta((1, 8, 6, 6)), meta((4, 8, 3, 3), memory_format=torch.contiguous_format),
     None, {}, ValueError, "weight must be channels_last"),
    ("even filter", meta((1, 8, 6, 6)), meta((4, 8, 2, 2)), None, {}, NotImplementedError,
     "2x2 filter: .* odd"),
    ("channels differ", meta((1, 8, 6, 6)), meta((4, 6, 3, 3)), None, {}, ValueError,
     "weight has 6 input channels but x has 8"),
    ("bias shape", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), meta((5,)), {}, ValueError,
     r"it must be \(4,\)"),
    ("3-D x", meta((8, 6, 6)), meta((4, 8, 3, 3)), None, {}, ValueError, "must be 4-D"),
    ("stride 2", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), None, dict(stride=2),
     NotImplementedError, "stride 1 only"),
    ("padding 0", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), None, dict(padding=0),
     NotImplementedError, "'same' only"),
    ("conv2d's kernel", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), None,
     dict(kernel="02_gpu_naive/block16x16"), ValueError,
     "runs fp32 in the nchw layout; this call is binary in nhwc"),
    ("unknown kernel", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), None, dict(kernel="09_binary/x"),
     ValueError, "one of 09_binary/pack_bmma_and, 09_binary/packed_xnor"),
    ("kernel not a string", meta((1, 8, 6, 6)), meta((4, 8, 3, 3)), None, dict(kernel=1),
     TypeError, "kernel=1: give a kernel's name"),
    ("too large", meta((1, 1, 50_000, 50_000)), meta((1, 1, 3, 3)), None, {},
     NotImplementedError, r"2\^31-1 elements"),
    ("weight on another device", meta((1, 8, 6, 6)),
     torch.zeros(4, 8, 3, 3).contiguous(memory_format=torch.channels_last), None, {}, ValueError,
     r"weight is on cpu but x is on meta: .*\(move it with weight.to\(x.device\)\)"),
]


@pytest.mark.parametrize("what, x, w, b, kwargs, exception, message", BAD_CALLS,
                         ids=[c[0] for c in BAD_CALLS])
def test_bad_call(what, x, w, b, kwargs, exception, message):
    with pytest.raises(exception, match=message):
        conv_lessons.binary_conv2d(x, w, b, **kwargs)


def test_not_tensors():
    with pytest.raises(TypeError, match="x is a list, not a torch.Tensor"):
        conv_lessons.binary_conv2d([1.0], meta((4, 8, 3, 3)))


# ---- the fake kernel, without a GPU ----

def test_fake_kernel_output():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(2, 40, 13, 17, device="cuda").contiguous(
            memory_format=torch.channels_last)
        w = torch.empty(5, 40, 3, 3, device="cuda").contiguous(memory_format=torch.channels_last)
        y = conv_lessons.binary_conv2d(x, w, torch.empty(5, device="cuda"))
    assert y.shape == (2, 5, 13, 17) and y.dtype == torch.float32 and y.device.type == "cuda"
    assert y.is_contiguous(memory_format=torch.channels_last)


def test_fake_kernel_raises_as_the_real_one():
    assert_fake_raises(torch.ops.conv_lessons.binary_conv2d,
                       [(1, 8, 8, 8), (3, 8, 3, 3), None, None], ValueError,
                       "x must be channels_last")


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_compile_traces_without_a_gpu(dynamic):
    """torch.compile(fullgraph=True) traces the op through its fake kernel: no graph break,
    at a second size too (symbolic sizes, which torch.compile turns on by itself when a
    size changes: x * 2, made in the graph, is still channels_last for the check)."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, w: torch.relu(conv_lessons.binary_conv2d(x * 2, w)),
                             fullgraph=True, backend="eager", dynamic=dynamic)
    for h, w in ((6, 6), (9, 13)):
        y = compiled(meta((1, 8, h, w)), meta((4, 8, 3, 3)))
        assert y.shape == (1, 4, h, w) and y.is_contiguous(memory_format=torch.channels_last)


def test_backward_raises():
    y = conv_lessons.binary_conv2d(meta((1, 8, 6, 6)), meta((4, 8, 3, 3)).requires_grad_())
    assert y.shape == (1, 4, 6, 6) and y.dtype == torch.float32
    with pytest.raises(NotImplementedError, match="binary_conv2d is forward only: .*straight-"):
        y.sum().backward()
