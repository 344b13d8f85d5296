"""conv_lessons.DeltaConv2d (lesson 11) against the lesson's host reference, reimplemented
in torch: its threshold step in float32, operation for operation (so x_ref, the input the
output stands for, is the GPU's bit for bit), and the layer applied to x_ref in float64,
which the output equals on every frame whatever the variant (lessons/11_delta/problem.h);
the lesson's bound on the error against the frame itself; every input it refuses; and the
C ABI of python/src/delta_conv2d.h called directly.

    pip install ./python && pytest python/tests/test_delta_conv2d.py

The checks of bad settings and frames and the C ABI's arguments run without a GPU."""

import ctypes

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
F = torch.nn.functional

import conv_lessons  # noqa: E402  (after the skip above)
from _gpu import busy_side_stream, needs_gpu  # noqa: E402
from conv_lessons import _library  # noqa: E402

VARIANTS = ["dense", "tile_mask", "delta_update", "delta_compact"]
FRAMES = 8
# float32 against float64, the accumulating variants' rounding of every frame's update
# included in the magnitude: well inside this share of it.
RTOL = 1e-5

# (h, w, c, ksize, tile, threshold, pan): lesson 11's awkward sizes (its CMakeLists.txt):
# not a multiple of the tile, threshold 0, 16-pixel tiles, 5x5 and 1x1 filters, one pixel,
# a filter larger than the frame, a channel count that is not a multiple of 64, and a
# panning camera, where every tile changes.
CASES = {
    "not_tile_multiple": (37, 53, 16, 3, 8, 0.02, 0),
    "threshold_zero": (45, 61, 8, 3, 8, 0.0, 0),
    "tile16": (64, 96, 32, 3, 16, 0.02, 0),
    "k5": (29, 31, 4, 5, 8, 0.02, 0),
    "k1": (20, 20, 3, 1, 8, 0.02, 0),
    "one_pixel": (1, 1, 2, 3, 8, 0.02, 0),
    "filter_larger_than_frame": (3, 5, 4, 7, 8, 0.02, 0),
    "c100": (24, 40, 100, 3, 8, 0.02, 0),
    "pan": (40, 48, 16, 3, 8, 0.02, 3),
}


def video(h, w, c, pan=0, frames=FRAMES, seed=0, device="cuda"):
    """A still scene with a square that moves, a slow drift below any one frame's
    threshold (carried over until it passes) and a little noise; pan shifts each frame
    left. Each frame (1, c, h, w), channels_last."""
    g = torch.Generator().manual_seed(seed)
    scene = torch.rand(c, h, w + pan * frames, generator=g)
    out = []
    for t in range(frames):
        x = scene[:, :, pan * t:pan * t + w].clone()
        y0, x0 = (2 * t) % h, (3 * t) % w
        x[:, y0:y0 + 4, x0:x0 + 4] += 0.5
        x[:, h // 2:, :w // 2] += 0.004 * t
        x += 0.002 * torch.randn(x.shape, generator=g)
        out.append(x[None].to(device).contiguous(memory_format=torch.channels_last))
    return out


def conv64(x, w, b):
    return F.conv2d(x.double(), w.double(), None if b is None else b.double(),
                    padding=w.shape[2] // 2)


class Reference:
    """The lesson's host algorithm (delta_cpu): x_ref by the float32 threshold step, the
    output conv(x_ref) in float64, and the magnitude of what the output has summed."""

    def __init__(self, layer):
        self.w, self.b, self.threshold = layer.weight, layer.bias, layer.threshold
        self.x_ref = None

    def frame(self, x, variant):
        if self.x_ref is None or variant == "dense":
            self.x_ref = x.clone()
            self.magnitude = conv64(x.abs(), self.w.abs(), None)
        else:
            active = (x - self.x_ref).abs().amax(dim=1, keepdim=True) > self.threshold
            d = torch.where(active, x - self.x_ref, 0.0)
            self.x_ref = torch.where(active, x, self.x_ref)
            self.magnitude = self.magnitude + conv64(d.abs(), self.w.abs(), None)
        bias = 0 if self.b is None else self.b.double().abs().view(1, -1, 1, 1)
        return conv64(self.x_ref, self.w, self.b), self.magnitude + bias


def assert_close(y, ref, magnitude):
    err = (y.double() - ref).abs()
    bad = ~(err <= torch.finfo(torch.float32).tiny + RTOL * magnitude)  # NaN fails
    assert not bad.any(), (f"{int(bad.sum())} of {y.numel()} outputs off, max error "
                           f"{err.max().item():.3g}")


def run_sequence(layer, frames, variant):
    reference = Reference(layer)
    for t, x in enumerate(frames):
        y = layer(x)
        assert y.shape == x.shape and y.is_contiguous(memory_format=torch.channels_last)
        ref, magnitude = reference.frame(x, variant)
        assert_close(y, ref, magnitude)
        # The lesson's guarantee against the frame itself.
        bound = layer.threshold * layer.weight.double().abs().sum(dim=(1, 2, 3)).max()
        error = (y.double() - conv64(x, layer.weight, layer.bias)).abs().max()
        assert error <= bound + 1e-4, f"frame {t}: error {error:.3g} above the bound {bound:.3g}"


# ---- against the lesson's reference, on the GPU ----

@needs_gpu
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_reference(case, variant):
    h, w, c, k, tile, threshold, pan = CASES[case]
    torch.manual_seed(0)
    with torch.no_grad():
        layer = conv_lessons.DeltaConv2d(c, k, threshold=threshold, tile=tile, variant=variant,
                                         device="cuda")
        run_sequence(layer, video(h, w, c, pan), variant)


@needs_gpu
def test_threshold_zero_is_dense():
    frames = video(33, 35, 16)
    with torch.no_grad():
        sparse = conv_lessons.DeltaConv2d(16, 3, threshold=0, device="cuda")
        dense = conv_lessons.DeltaConv2d(16, 3, variant="dense", device="cuda")
        dense.load_state_dict(sparse.state_dict())
        for x in frames:
            torch.testing.assert_close(sparse(x), dense(x), rtol=1e-5, atol=1e-5)


@needs_gpu
def test_a_small_change_is_carried_over():
    """0.004 a frame against a threshold of 0.01: applied on the third frame, in full."""
    x = torch.rand(1, 8, 16, 16, device="cuda").contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        layer = conv_lessons.DeltaConv2d(8, 3, threshold=0.01, device="cuda")
        first = layer(x)
        assert torch.equal(layer(x + 0.004), first)
        assert torch.equal(layer(x + 0.008), first)
        ref = conv64(x + 0.012, layer.weight, layer.bias)
        assert_close(layer(x + 0.012), ref, conv64((x + 0.012).abs(), layer.weight.abs(), None))


@needs_gpu
def test_new_sequence():
    """Another frame size, reset(), new weights or another tile start again densely."""
    frames = video(24, 32, 8)
    with torch.no_grad():
        layer = conv_lessons.DeltaConv2d(8, 3, threshold=0.5, device="cuda")
        layer(frames[0])
        other = video(16, 16, 8)[1]
        assert_close(layer(other), conv64(other, layer.weight, layer.bias),
                     conv64(other.abs(), layer.weight.abs(), None) + 1)
        for restart in (layer.reset, lambda: layer.weight.mul_(-1),
                        lambda: setattr(layer, "tile", 16)):
            layer(frames[0])
            restart()
            y = layer(frames[1])  # a change below 0.5 everywhere but the square
            assert_close(y, conv64(frames[1], layer.weight, layer.bias),
                         conv64(frames[1].abs(), layer.weight.abs(), None) + 1)


@needs_gpu
def test_from_conv2d_and_no_bias():
    for bias in (True, False):
        conv = torch.nn.Conv2d(12, 12, 5, padding=2, bias=bias).cuda()
        layer = conv_lessons.DeltaConv2d.from_conv2d(conv, threshold=0.01)
        x = video(19, 23, 12)[0]
        with torch.no_grad():
            ref = conv64(x, conv.weight, conv.bias)
            assert_close(layer(x), ref, conv64(x.abs(), conv.weight.abs(), None) + 1)


@needs_gpu
@pytest.mark.parametrize("variant", VARIANTS)
def test_opcheck(variant):
    h, w, c, k, tile = 20, 24, 8, 3, 8
    x0, x1 = video(h, w, c)[:2]
    weight = torch.randn(c, c, k, k, device="cuda").contiguous(memory_format=torch.channels_last)
    bias = torch.randn(c, device="cuda")
    _, state_bytes = _library.delta_plan((h, w, c, k, tile), variant)
    out = torch.empty_like(x0)
    state = torch.empty(state_bytes, dtype=torch.uint8, device="cuda")
    op = torch.ops.conv_lessons.delta_conv2d_.default
    torch.library.opcheck(op, (out, state, x0, weight, bias, 0.02, tile, variant, True))
    if variant != "delta_compact":  # its list of tiles comes in atomicAdd's order
        op(out, state, x0, weight, bias, 0.02, tile, variant, True)  # a sequence to go on
        torch.library.opcheck(op, (out, state, x1, weight, bias, 0.02, tile, variant, False))


@needs_gpu
def test_compile_without_graph_break():
    frames = video(24, 40, 16)
    with torch.no_grad():
        eager = conv_lessons.DeltaConv2d(16, 3, device="cuda")
        layer = conv_lessons.DeltaConv2d(16, 3, device="cuda")
        layer.load_state_dict(eager.state_dict())
        torch._dynamo.reset()
        compiled = torch.compile(layer, fullgraph=True)
        for x in frames:
            torch.testing.assert_close(compiled(x * 1), eager(x), rtol=0, atol=0)


@needs_gpu
def test_side_stream_with_queued_work():
    frames = video(40, 48, 16)
    with torch.no_grad():
        layer = conv_lessons.DeltaConv2d(16, 3, device="cuda")
        reference = Reference(layer)
        for x in frames:
            side = busy_side_stream()
            with torch.cuda.stream(side):
                y = layer(x * 2)
            torch.cuda.current_stream().wait_stream(side)
            ref, magnitude = reference.frame(x * 2, "delta_update")
            assert_close(y, ref, magnitude)


@needs_gpu
def test_frame_on_another_device():
    layer = conv_lessons.DeltaConv2d(4, 3)
    x = video(8, 8, 4)[0]
    with pytest.raises(ValueError, match=r"the layer is on cpu but the frame is on cuda:0: "
                                         r"move the layer with .to\('cuda:0'\)"):
        with torch.no_grad():
            layer(x)


# ---- what it refuses, without a GPU ----

BAD_LAYERS = [
    # (what, arguments, keyword arguments, exception, message)
    ("no channels", (0,), {}, ValueError, "channels=0: at least 1"),
    ("even filter", (4, 2), {}, NotImplementedError, "kernel_size=2: the lesson's filters are odd"),
    ("9x9 filter", (4, 9), {}, NotImplementedError, "1x1 to 7x7"),
    ("tile 12", (4,), dict(tile=12), ValueError, "tile=12: a positive multiple of 8"),
    ("negative threshold", (4,), dict(threshold=-1), ValueError, "threshold=-1: a finite"),
    ("nan threshold", (4,), dict(threshold=float("nan")), ValueError, "threshold=nan"),
    ("text threshold", (4,), dict(threshold="x"), TypeError, "threshold='x': give a number"),
    ("unknown variant", (4,), dict(variant="sparse"), ValueError,
     "variant='sparse': one of 'dense', 'tile_mask', 'delta_update', 'delta_compact'"),
    ("channels not an int", (4.0,), {}, TypeError, "channels=4.0: give an int"),
    ("bias not a bool", (4, 3, "yes"), {}, TypeError, "bias='yes': True or False"),
]


@pytest.mark.parametrize("what, args, kwargs, exception, message", BAD_LAYERS,
                         ids=[b[0] for b in BAD_LAYERS])
def test_bad_layer(what, args, kwargs, exception, message):
    with pytest.raises(exception, match=message):
        conv_lessons.DeltaConv2d(*args, **kwargs)


def meta_frame(*shape, dtype=torch.float32, memory_format=torch.channels_last):
    t = torch.empty(shape, dtype=dtype, device="meta")
    return t.contiguous(memory_format=memory_format) if t.dim() == 4 else t


BAD_FRAMES = [
    # (what, frame, exception, message)
    ("batch 2", meta_frame(2, 8, 6, 6), NotImplementedError,
     "a batch of 2: .* one at a time \\(batch 1\\)"),
    ("other channels", meta_frame(1, 4, 6, 6), ValueError,
     "frame has 4 channels; the layer maps 8"),
    ("NCHW", meta_frame(1, 8, 6, 6, memory_format=torch.contiguous_format), ValueError,
     r"frame must be channels_last \(NHWC\): call frame.contiguous"),
    ("float16", meta_frame(1, 8, 6, 6, dtype=torch.float16), TypeError,
     r"frame is torch.float16; conv_lessons.DeltaConv2d takes float32"),
    ("3-D", meta_frame(8, 6, 6), ValueError, r"it must be 4-D: \(1, 8, H, W\)"),
    ("empty", meta_frame(1, 8, 0, 6), ValueError, "frame is 0x6: at least 1x1"),
    ("too large", meta_frame(1, 8, 20_000, 20_000), NotImplementedError, r"2\^31-1 elements"),
    ("not a tensor", [1.0], TypeError, "frame is a list, not a torch.Tensor"),
]


@pytest.mark.parametrize("what, frame, exception, message", BAD_FRAMES,
                         ids=[b[0] for b in BAD_FRAMES])
def test_bad_frame(what, frame, exception, message):
    layer = conv_lessons.DeltaConv2d(8, 3, device="meta")
    with pytest.raises(exception, match=message), torch.no_grad():
        layer(frame)


def test_cpu_frame():
    layer = conv_lessons.DeltaConv2d(4, 3)
    x = torch.zeros(1, 4, 8, 8).contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError, match=r"frame is on cpu: conv_lessons.DeltaConv2d runs on CUDA"):
        with torch.no_grad():
            layer(x)


def test_forward_only():
    layer = conv_lessons.DeltaConv2d(8, 3, device="meta")
    assert not any(p.requires_grad for p in layer.parameters())
    with pytest.raises(NotImplementedError, match="DeltaConv2d is forward only: .*no_grad"):
        layer(meta_frame(1, 8, 6, 6).requires_grad_())


BAD_CONVS = [
    # (what, torch.nn.Conv2d arguments, exception, message)
    ("channels differ", dict(in_channels=4, out_channels=8, kernel_size=3, padding=1), ValueError,
     "a 4 -> 8 channel layer"),
    ("stride 2", dict(in_channels=4, out_channels=4, kernel_size=3, padding=1, stride=2),
     NotImplementedError, r"stride=\(2, 2\)"),
    ("padding 0", dict(in_channels=4, out_channels=4, kernel_size=3), NotImplementedError,
     r"padding=\(0, 0\)"),
    ("non-square", dict(in_channels=4, out_channels=4, kernel_size=(3, 5), padding="same"),
     NotImplementedError, "a 3x5 filter"),
    ("reflect padding", dict(in_channels=4, out_channels=4, kernel_size=3, padding=1,
                             padding_mode="reflect"), NotImplementedError, "'reflect'"),
]


@pytest.mark.parametrize("what, kwargs, exception, message", BAD_CONVS,
                         ids=[b[0] for b in BAD_CONVS])
def test_bad_from_conv2d(what, kwargs, exception, message):
    with pytest.raises(exception, match=message):
        conv_lessons.DeltaConv2d.from_conv2d(torch.nn.Conv2d(**kwargs))


def test_from_conv2d_copies():
    conv = torch.nn.Conv2d(6, 6, 3, padding="same")
    layer = conv_lessons.DeltaConv2d.from_conv2d(conv, threshold=0.1, tile=16,
                                                 variant="tile_mask")
    assert torch.equal(layer.weight, conv.weight) and torch.equal(layer.bias, conv.bias)
    assert layer.weight.is_contiguous(memory_format=torch.channels_last)
    assert "threshold=0.1, tile=16, variant='tile_mask'" in repr(layer)


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_compile_traces_without_a_gpu(dynamic):
    """torch.compile(fullgraph=True) traces the module through its ops' fake kernels, a new
    sequence's allocation included: no graph break. With symbolic sizes too: torch.compile
    turns them on by itself when a frame's size changes (the third frame here, or the first
    where a compiled layer saw other sizes before), and the output the module allocates in
    the graph must pass the op's channels_last check (PyTorch 2.11 said it did not).
    Dynamo's caches are emptied first, so the test means the same wherever it runs."""
    torch._dynamo.reset()
    layer = conv_lessons.DeltaConv2d(8, 3, device="meta")
    compiled = torch.compile(layer, fullgraph=True, backend="eager", dynamic=dynamic)
    with torch.no_grad():
        for shape in ((1, 8, 16, 16), (1, 8, 16, 16), (1, 8, 9, 17)):
            assert compiled(meta_frame(*shape)).shape == shape
    assert layer._sequence[0] == (1, 8, 9, 17)


def op_arguments(**change):
    """The op's arguments on fake CUDA tensors, some changed."""
    c, h, w = 8, 6, 6
    args = dict(
        out=torch.empty(1, c, h, w, device="cuda").contiguous(memory_format=torch.channels_last),
        state=torch.empty(64, dtype=torch.uint8, device="cuda"),
        frame=torch.empty(1, c, h, w, device="cuda").contiguous(memory_format=torch.channels_last),
        weight=torch.empty(c, c, 3, 3, device="cuda").contiguous(memory_format=torch.channels_last),
        bias=torch.empty(c, device="cuda"))
    args.update(change)
    return [*args.values(), 0.02, 8, "delta_update", True]


BAD_OP_CALLS = [
    # (what, change of op_arguments, message)
    ("NCHW frame", lambda: dict(frame=torch.empty(1, 8, 6, 6, device="cuda")),
     "frame must be channels_last"),
    ("NCHW weight", lambda: dict(weight=torch.empty(8, 8, 3, 3, device="cuda")),
     r"weight must be channels_last \(KRSC\)"),
    ("even weight", lambda: dict(weight=torch.empty(8, 8, 2, 2, device="cuda").contiguous(
        memory_format=torch.channels_last)), r"it must be \(C, C, k, k\), k odd up to 7"),
    ("bias shape", lambda: dict(bias=torch.empty(9, device="cuda")), r"it must be \(8,\)"),
    ("out shape", lambda: dict(out=torch.empty(1, 8, 6, 7, device="cuda").contiguous(
        memory_format=torch.channels_last)), "out must be float32 like the frame"),
    ("state dtype", lambda: dict(state=torch.empty(16, device="cuda")),
     "state must be a 1-D uint8 tensor"),
    ("bias on another device", lambda: dict(bias=torch.empty(8)),
     r"bias is on cpu but frame is on cuda:0: .*\(move it with bias.to\(frame.device\)\)"),
    ("out on another device", lambda: dict(out=torch.empty(1, 8, 6, 6).contiguous(
        memory_format=torch.channels_last)), r"out is on cpu but frame is on cuda:0"),
    ("state on another device", lambda: dict(state=torch.empty(64, dtype=torch.uint8)),
     r"state is on cpu but frame is on cuda:0"),
]


@pytest.mark.parametrize("what, change, message", BAD_OP_CALLS, ids=[b[0] for b in BAD_OP_CALLS])
def test_fake_kernel_raises_as_the_real_one(what, change, message):
    """The op called without the module: its fake kernel checks what the real one does."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        with pytest.raises(ValueError, match=message):
            torch.ops.conv_lessons.delta_conv2d_(*op_arguments(**change()))
        torch.ops.conv_lessons.delta_conv2d_(*op_arguments())


# ---- the C ABI (delta_conv2d.h), called directly ----

OK, BAD_ARGUMENT, UNSUPPORTED, CUDA_ERROR = 0, 1, 2, 3


BAD_PLANS = [
    # (what, (h, w, c, ksize, tile), variant, message)
    ("tile 12", (8, 8, 4, 3, 12), 2, "the tile size must be a positive multiple of 8"),
    ("9x9 filter", (8, 8, 4, 9, 8), 2, "the filter size must be odd, from 1 to 7"),
    ("no channels", (8, 8, 0, 3, 8), 2, "cin must equal cout, at least 1"),
    ("empty frame", (0, 8, 4, 3, 8), 2, "the frame size must be at least 1x1"),
    ("variant 4", (8, 8, 4, 3, 8), 4, "variant 4: 0 dense, 1 tile_mask"),
]


@pytest.mark.parametrize("what, shape, variant, message", BAD_PLANS,
                         ids=[p[0] for p in BAD_PLANS])
def test_abi_bad_plan(lib, what, shape, variant, message):
    """Without a GPU: the plan needs none."""
    kernel, state = ctypes.c_char_p(), ctypes.c_size_t()
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_delta_plan(*shape, variant, ctypes.byref(kernel),
                                       ctypes.byref(state), err, len(err))
    assert status == BAD_ARGUMENT and message in err.value.decode()


BAD_FRAMES_ABI = [
    # (what, (frame, weights, bias, out, state), threshold, message)
    ("null state", (16, 16, 16, 16, None), 0.02, "a NULL frame, weights, bias, out or state"),
    ("misaligned frame", (20, 16, 16, 16, 16), 0.02, "must be 16-byte aligned"),
    ("misaligned bias", (16, 16, 18, 16, 16), 0.02, "the bias aligned to its floats"),
    ("negative threshold", (16, 16, 16, 16, 16), -1.0, "the threshold must be a finite number"),
]


@pytest.mark.parametrize("what, pointers, threshold, message", BAD_FRAMES_ABI,
                         ids=[b[0] for b in BAD_FRAMES_ABI])
def test_abi_bad_frame(lib, what, pointers, threshold, message):
    """On fake addresses: it must refuse before touching them."""
    err = ctypes.create_string_buffer(512)
    status = lib.conv_torch_delta_frame(0, None, *pointers, 1 << 20, 8, 8, 4, 3, 8, threshold, 1,
                                        2, err, len(err))
    assert status == BAD_ARGUMENT and message in err.value.decode()
