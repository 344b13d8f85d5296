"""conv_lessons.covariance and covariance_ (lesson 10) against the lesson's float64
reference, reimplemented in torch, in the seed's 7-D layout and the compact one; every
input they refuse; and the C ABI of python/src/covariance.h called directly.

    pip install ./python && pytest python/tests/test_covariance.py

As the lesson draws them, the seed layout's entries outside the channel-diagonal blocks
are NaN: a kernel that reads one spreads it, and one that writes one is caught. The
checks of bad inputs, of the fake kernel and of the C ABI's arguments run without a
GPU."""

import ctypes

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import conv_lessons  # noqa: E402  (after the skip above)
from _fake import assert_fake_raises  # noqa: E402
from _gpu import busy_side_stream, needs_gpu  # noqa: E402

# float32 sums of Ci k^2 terms against float64: well inside this share of their magnitude.
RTOL = 1e-5

# (b, ci, co, h, w, k): lesson 10's awkward sizes (its CMakeLists.txt): the seed's toy, one
# input or output channel, 1x1 and 5x5 windows, a window as large as the image, odd
# widths, an image larger than the box filter's tiles, rows a multiple of 4 (the 16-byte
# paths) with more output channels than one group of 8.
SHAPES = [
    (2, 3, 3, 9, 9, 3), (1, 1, 3, 9, 7, 3), (2, 4, 1, 8, 9, 3), (1, 2, 2, 6, 5, 1),
    (1, 3, 2, 11, 9, 5), (2, 2, 2, 5, 5, 5), (3, 2, 3, 13, 17, 3), (1, 2, 2, 41, 37, 3),
    (2, 5, 19, 10, 6, 3),
]
# (layout, symmetric)
MODES = {"seed": ("seed", False), "compact": ("compact", False),
         "compact_symmetric": ("compact", True)}


def shape_id(shape):
    return "b{}_ci{}_co{}_{}x{}_k{}".format(*shape)


def draw(shape, layout, seed=0, device="cuda"):
    """mu, gamma, c and out before the op, as lesson 10 draws them: mu and gamma's
    diagonal blocks uniform in [-1, 1), each block symmetric as a covariance is; c in
    [0, 1); out's blocks in [-1, 1); in the seed's layout everything else NaN."""
    b, ci, co, h, w, k = shape
    ho, wo = h - k + 1, w - k + 1
    p, q = h * w, ho * wo
    g = torch.Generator().manual_seed(seed)

    def uniform(*size):
        return torch.rand(size, generator=g) * 2 - 1

    mu = uniform(b, ci, h, w)
    gd = uniform(b, ci, p, p)
    gd = (gd + gd.transpose(-1, -2)) / 2
    c = torch.rand(co, generator=g)
    if layout == "compact":
        # S in the op's layout, (B, Ho, Wo, Ho, Wo), as the lesson's compact files hold it.
        tensors = mu, gd.view(b, ci, h, w, h, w), c, uniform(b, ho, wo, ho, wo)
    else:
        gamma = torch.full((b, ci, p, ci, p), float("nan"))
        out = torch.full((b, co, q, co, q), float("nan"))
        for i in range(ci):
            gamma[:, i, :, i, :] = gd[:, i]
        for i in range(co):
            out[:, i, :, i, :] = uniform(b, q, q)
        tensors = mu, gamma.view(b, ci, h, w, ci, h, w), c, out.view(b, co, ho, wo, co, ho, wo)
    return [t.to(device) for t in tensors]


def window_sums(mu, gd, k):
    """S(b, q, q') and its magnitude, sum |mu mu'| + |gd|, in float64 (cov_sum_at)."""
    b, ci, h, w = mu.shape
    ho, wo = h - k + 1, w - k + 1
    rows = torch.arange(ho).repeat_interleave(wo) * w + torch.arange(wo).repeat(ho)
    mu, gd = mu.double().reshape(b, ci, h * w), gd.double()
    s = torch.zeros(b, ho * wo, ho * wo, dtype=torch.float64)
    magnitude = torch.zeros_like(s)
    for di in range(k):
        for dj in range(k):
            at = rows + di * w + dj
            m, g = mu[:, :, at], gd[:, :, at][:, :, :, at]
            products = m[:, :, :, None] * m[:, :, None, :]
            s += (products + g).sum(1)
            magnitude += (products.abs() + g.abs()).sum(1)
    return s, magnitude


def diagonal_blocks(t, b, ci, p):
    """The channel-diagonal blocks of a seed-layout tensor, (b, ci, p, p)."""
    return t.reshape(b, ci, p, ci, p).diagonal(dim1=1, dim2=3).permute(0, 3, 1, 2)


def assert_matches_reference(before, after, shape, layout):
    mu, gamma, c, out = (t.cpu() for t in before)
    result = after.cpu().double()
    b, ci, co, h, w, k = shape
    q = (h - k + 1) * (w - k + 1)
    gd = gamma.reshape(b, ci, h * w, h * w) if layout == "compact" else diagonal_blocks(
        gamma, b, ci, h * w)
    s, magnitude = window_sums(mu, gd, k)
    if layout == "compact":
        ref, got, start = out.double() + s.view(out.shape), result, out
        magnitude = magnitude.view(out.shape)
    else:
        cs = c.double().view(1, co, 1, 1)
        start = diagonal_blocks(out, b, co, q).double()
        ref = start + cs * s[:, None]
        magnitude = cs * magnitude[:, None]
        got = diagonal_blocks(result, b, co, q)
        off = result.reshape(b, co, q, co, q).clone()
        for i in range(co):
            off[:, i, :, i, :] = float("nan")
        assert off.isnan().all(), "an entry outside the channel-diagonal blocks was written"
    err = (got - ref).abs()
    bad = ~(err <= torch.finfo(torch.float32).tiny + RTOL * (magnitude + start.abs()))
    assert not bad.any(), (f"{int(bad.sum())} of {got.numel()} outputs off, max error "
                           f"{err.max().item():.3g}")


# ---- against the lesson's reference, on the GPU ----

@needs_gpu
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_matches_reference(shape, mode):
    layout, symmetric = MODES[mode]
    before = draw(shape, layout)
    out = before[3].clone()
    returned = conv_lessons.covariance_(*before[:3], out, symmetric=symmetric)
    assert returned is out
    assert_matches_reference(before, out, shape, layout)


@needs_gpu
@pytest.mark.parametrize("layout", ["seed", "compact"])
def test_random_shapes(layout):
    g = torch.Generator().manual_seed(5)
    for seed in range(8):
        b, ci, co = (int(v) for v in torch.randint(1, 5, (3,), generator=g))
        k = 2 * int(torch.randint(0, 3, (1,), generator=g)) + 1
        h, w = (int(v) + k for v in torch.randint(0, 12, (2,), generator=g))
        shape = (b, ci, co, h, w, k)
        before = draw(shape, layout, seed=seed)
        assert_matches_reference(before, conv_lessons.covariance(*before), shape, layout)


@needs_gpu
def test_functional_leaves_out_alone():
    before = draw((2, 3, 3, 9, 9, 3), "compact")
    out = before[3].clone()
    result = conv_lessons.covariance(*before[:3], out)
    assert torch.equal(out, before[3]) and not torch.equal(result, out)


@needs_gpu
def test_nothing_to_add():
    """No batch or no input channel: S is an empty sum, out stays as it was."""
    for shape in ((0, 2, 2, 6, 6, 3), (2, 0, 2, 6, 6, 3)):
        for layout in ("seed", "compact"):
            before = draw(shape, layout)
            torch.testing.assert_close(conv_lessons.covariance(*before), before[3], rtol=0,
                                       atol=0, equal_nan=True)


@needs_gpu
def test_view_off_16_bytes():
    mu, gamma, c, out = draw((1, 2, 2, 8, 8, 3), "compact")
    shifted = torch.empty(mu.numel() + 1, device="cuda")[1:].view(mu.shape)
    shifted.copy_(mu)
    with pytest.raises(ValueError, match="16-byte aligned"):
        conv_lessons.covariance(shifted, gamma, c, out)


@needs_gpu
@pytest.mark.parametrize("mode", list(MODES))
def test_opcheck(mode):
    layout, symmetric = MODES[mode]
    mu, gamma, c, out = draw((2, 3, 3, 8, 8, 3), layout)
    torch.library.opcheck(torch.ops.conv_lessons.covariance_.default,
                          (mu, gamma, c, out, symmetric))


@needs_gpu
@pytest.mark.parametrize("layout", ["seed", "compact"])
def test_compile_without_graph_break(layout):
    mu, gamma, c, out = draw((2, 3, 4, 10, 8, 3), layout)

    def step(mu, gamma, c, out):
        return conv_lessons.covariance(mu * 0.5, gamma, c, out) + 1

    torch._dynamo.reset()
    compiled = torch.compile(step, fullgraph=True)
    expected = step(mu, gamma, c, out)
    torch.testing.assert_close(compiled(mu, gamma, c, out), expected, rtol=0, atol=0,
                               equal_nan=True)


@needs_gpu
@pytest.mark.parametrize("layout", ["seed", "compact"])
def test_side_stream_with_queued_work(layout):
    before = draw((2, 4, 3, 16, 16, 3), layout)
    side = busy_side_stream()
    with torch.cuda.stream(side):
        mu = before[0] * 2
        out = before[3] + 0
        conv_lessons.covariance_(mu, before[1], before[2], out)
    torch.cuda.current_stream().wait_stream(side)
    assert_matches_reference([before[0] * 2, *before[1:]], out, (2, 4, 3, 16, 16, 3), layout)


@needs_gpu
def test_in_place_moves_the_version_on():
    """covariance_ writes out as an in-place op does, on the eager path too (which skips
    the dispatcher): out's version moves on, so autograd refuses a saved copy of it."""
    mu, gamma, c, out = draw((1, 2, 2, 6, 6, 3), "compact")
    before = out._version
    conv_lessons.covariance_(mu, gamma, c, out)
    assert out._version > before


@needs_gpu
def test_tensors_on_two_devices():
    mu, gamma, c, out = draw((1, 2, 2, 6, 6, 3), "compact")
    with pytest.raises(ValueError, match=r"gamma is on cpu but mu is on cuda:0: conv_lessons."
                                         r"covariance takes all its tensors on one CUDA device "
                                         r"\(move it with gamma.to\(mu.device\)\)"):
        conv_lessons.covariance(mu, gamma.cpu(), c, out)


# ---- what they refuse, without a GPU ----

def meta(*shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


def compact(b=2, ci=3, h=9, w=9, k=3):
    ho, wo = h - k + 1, w - k + 1
    return meta(b, ci, h, w), meta(b, ci, h, w, h, w), None, meta(b, ho, wo, ho, wo)


def seed(b=2, ci=3, co=4, h=9, w=9, k=3):
    ho, wo = h - k + 1, w - k + 1
    return (meta(b, ci, h, w), meta(b, ci, h, w, ci, h, w), meta(co),
            meta(b, co, ho, wo, co, ho, wo))


def test_cpu_tensors():
    mu, gamma, c, out = (t if t is None else torch.zeros(t.shape) for t in compact())
    with pytest.raises(ValueError, match=r"mu is on cpu: conv_lessons.covariance runs on CUDA"):
        conv_lessons.covariance(mu, gamma, c, out)


def replace(tensors, i, value):
    return tuple(value if j == i else t for j, t in enumerate(tensors))


BAD_CALLS = [
    # (what, (mu, gamma, c, out), keyword arguments, exception, message)
    ("gamma 5-D", replace(compact(), 1, meta(2, 3, 9, 9, 9)), {}, ValueError,
     r"gamma has shape \(2, 3, 9, 9, 9\); it must be 7-D, the seed's"),
    ("gamma of other images", replace(compact(), 1, meta(2, 3, 9, 9, 8, 9)), {}, ValueError,
     r"for mu of shape \(2, 3, 9, 9\) it must be \(2, 3, 9, 9, 9, 9\)"),
    ("seed gamma, channels differ", replace(seed(), 1, meta(2, 3, 9, 9, 2, 9, 9)), {},
     ValueError, r"it must be \(2, 3, 9, 9, 3, 9, 9\)"),
    ("mu 3-D", replace(compact(), 0, meta(3, 9, 9)), {}, ValueError, r"\(B, Ci, H, W\)"),
    ("compact out 7-D", replace(compact(), 3, meta(2, 1, 7, 7, 1, 7, 7)), {}, ValueError,
     r"with the compact 6-D gamma it is S, \(B, Ho, Wo, Ho, Wo\)"),
    ("compact out flattened", replace(compact(), 3, meta(2, 49, 49)), {}, ValueError,
     r"\(B, Ho, Wo, Ho, Wo\) \(S flattened to \(B, Ho\*Wo, Ho\*Wo\).*out.view"),
    ("gamma on another device", replace(compact(), 1, torch.zeros(2, 3, 9, 9, 9, 9)), {},
     ValueError, r"gamma is on cpu but mu is on meta: .*\(move it with gamma.to\(mu.device\)\)"),
    ("seed out 5-D", replace(seed(), 3, meta(2, 7, 7, 7, 7)), {}, ValueError,
     "with the seed's 7-D gamma it is the seed's 7-D output"),
    ("even window", replace(compact(), 3, meta(2, 8, 8, 8, 8)), {}, NotImplementedError,
     "a 2x2 window: the lesson's windows are odd"),
    ("window not square", replace(compact(), 3, meta(2, 7, 8, 7, 8)), {}, NotImplementedError,
     "the lesson's windows are square"),
    ("out larger than mu", replace(compact(), 3, meta(2, 10, 10, 10, 10)), {}, ValueError,
     "out's image is 10x10 for a 9x9 input"),
    ("out's blocks differ", replace(compact(), 3, meta(2, 7, 7, 5, 5)), {}, ValueError,
     r"for the compact layout it must be \(2, 7, 7, 7, 7\)"),
    ("seed out's channels differ", replace(seed(), 3, meta(2, 4, 7, 7, 3, 7, 7)), {},
     ValueError, r"for the seed's layout it must be \(2, 4, 7, 7, 4, 7, 7\)"),
    ("seed without c", replace(seed(), 2, None), {}, ValueError,
     r"c is None: the seed's layout multiplies .* give c of shape \(4,\)"),
    ("c of other channels", replace(seed(), 2, meta(5)), {}, ValueError,
     r"for out's 4 output channels it must be \(4,\)"),
    ("compact c 2-D", replace(compact(), 2, meta(2, 2)), {}, ValueError, "c has shape"),
    ("float64 gamma", replace(compact(), 1, meta(2, 3, 9, 9, 9, 9, dtype=torch.float64)), {},
     TypeError, r"gamma is torch.float64; conv_lessons.covariance takes float32 \(call gamma"),
    ("not contiguous", replace(compact(), 0, meta(2, 9, 9, 3).permute(0, 3, 1, 2)), {},
     ValueError, r"mu must be contiguous: call mu.contiguous\(\)"),
    ("symmetric seed", seed(), dict(symmetric=True), NotImplementedError,
     "the symmetric kernel writes the compact layout only"),
    ("symmetric not a bool", compact(), dict(symmetric=1), TypeError,
     "symmetric=1: give True or False"),
    ("out not a tensor", replace(compact(), 3, [0.0]), {}, TypeError,
     "out is a list, not a torch.Tensor"),
]


@pytest.mark.parametrize("what, tensors, kwargs, exception, message", BAD_CALLS,
                         ids=[c[0] for c in BAD_CALLS])
@pytest.mark.parametrize("in_place", [False, True], ids=["covariance", "covariance_"])
def test_bad_call(what, tensors, kwargs, exception, message, in_place):
    op = conv_lessons.covariance_ if in_place else conv_lessons.covariance
    with pytest.raises(exception, match=message):
        op(*tensors, **kwargs)


def test_forward_only():
    mu, gamma, c, out = compact()
    with pytest.raises(NotImplementedError, match="covariance is forward only: .*no_grad"):
        conv_lessons.covariance(mu.requires_grad_(), gamma, c, out)
    with torch.no_grad():
        assert conv_lessons.covariance(mu, gamma, c, out).shape == out.shape


@pytest.mark.parametrize("layout", ["seed", "compact"])
def test_meta_tensors_give_the_shape(layout):
    tensors = seed() if layout == "seed" else compact()
    result = conv_lessons.covariance(*tensors)
    assert result.shape == tensors[3].shape and result.device.type == "meta"


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
@pytest.mark.parametrize("layout", ["seed", "compact"])
def test_compile_traces_without_a_gpu(layout, dynamic):
    """torch.compile(fullgraph=True) traces the op through its fake kernel: no graph break,
    at a second size too (symbolic sizes once a size changes)."""
    torch._dynamo.reset()
    compiled = torch.compile(lambda mu, gamma, c, out: conv_lessons.covariance(
        mu * 0.5, gamma, c, out) + 1, fullgraph=True, backend="eager", dynamic=dynamic)
    for h in (9, 11):
        tensors = seed(h=h) if layout == "seed" else compact(h=h)
        assert compiled(*tensors).shape == tensors[3].shape


def test_fake_kernel_raises_as_the_real_one():
    # mu, gamma, no c, and an out of a 2x2 window
    assert_fake_raises(torch.ops.conv_lessons.covariance_,
                       [(2, 3, 9, 9), (2, 3, 9, 9, 9, 9), None, (2, 8, 8, 8, 8), False],
                       NotImplementedError, "a 2x2 window")


# ---- the C ABI (covariance.h), called directly ----

OK, BAD_ARGUMENT, UNSUPPORTED, CUDA_ERROR = 0, 1, 2, 3
SEED, COMPACT = 0, 1


def plan(lib, shape, layout=SEED, symmetric=0):
    kernel, scratch = ctypes.c_char_p(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_covariance_plan(0, *shape, layout, symmetric, ctypes.byref(kernel),
                                            ctypes.byref(scratch), err, len(err))
    return status, err.value.decode(), kernel.value


BAD_PLANS = [
    # (what, (b, ci, co, h, w, k), layout, symmetric, status, message)
    ("no batch", (0, 2, 2, 8, 8, 3), SEED, 0, BAD_ARGUMENT, "each at least 1"),
    ("even window", (1, 2, 2, 8, 8, 2), SEED, 0, BAD_ARGUMENT, "ksize 2: an odd window"),
    ("window past the image", (1, 2, 2, 4, 8, 5), SEED, 0, BAD_ARGUMENT,
     "a 5x5 window on a 4x8 image"),
    ("layout 2", (1, 2, 2, 8, 8, 3), 2, 0, BAD_ARGUMENT, "layout 2: 0 the seed's or 1 compact"),
    ("symmetric seed", (1, 2, 2, 8, 8, 3), SEED, 1, UNSUPPORTED, "compact layout only"),
    ("too large", (1 << 20, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 3), SEED, 0, UNSUPPORTED,
     "would not fit in the address space"),
]


@pytest.mark.parametrize("what, shape, layout, symmetric, status, message", BAD_PLANS,
                         ids=[p[0] for p in BAD_PLANS])
def test_abi_bad_plan(lib, what, shape, layout, symmetric, status, message):
    got, err, _ = plan(lib, shape, layout, symmetric)
    assert got == status and message in err


def test_abi_valid_plan(lib):
    status, err, kernel = plan(lib, (2, 3, 3, 9, 9, 3), COMPACT, 1)
    if torch.cuda.is_available():
        assert (status, kernel) == (OK, b"10_covariance/channels_summed_symmetric")
    else:
        assert status == CUDA_ERROR and err.startswith("CUDA: cudaGetDeviceCount failed")


BAD_RUNS = [
    # (what, mu, gamma, c, out, layout, message)
    ("null mu", None, 16, 16, 16, SEED, "a NULL mu, gamma or out"),
    ("seed without c", 16, 16, None, 16, SEED, "a NULL c in the seed's layout"),
    ("misaligned gamma", 16, 20, None, 16, COMPACT, "must be 16-byte aligned"),
    ("misaligned c", 16, 16, 18, 16, SEED, "c aligned to its floats"),
]


@pytest.mark.parametrize("what, mu, gamma, c, out, layout, message", BAD_RUNS,
                         ids=[r[0] for r in BAD_RUNS])
def test_abi_bad_run(lib, what, mu, gamma, c, out, layout, message):
    """On fake addresses: it must refuse before touching them."""
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_covariance(0, None, mu, gamma, c, out, 16, 1 << 20, 2, 3, 3, 9, 9, 3,
                                       layout, 0, err, len(err))
    assert status == BAD_ARGUMENT and message in err.value.decode()
