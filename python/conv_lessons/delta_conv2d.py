"""DeltaConv2d: lesson 11's delta convolution as a stateful torch.nn.Module, forward only,
on the custom op torch.ops.conv_lessons.delta_conv2d_ (docs/11_delta.md).

One C -> C conv layer (odd k up to 7, "same" zero padding, stride 1, bias) applied to the
frames of a video in order, each a float32 (1, C, H, W) channels_last CUDA tensor. The
layer keeps, between calls, its output so far and x_ref, the input that output stands
for. The first frame of a sequence is computed densely. On each later frame a pixel whose
largest channel change since x_ref passes `threshold` is applied (x_ref = the frame
there); a smaller change is not dropped but carried over, and applied on the frame it
passes the threshold, so the output never drifts:

    |y - conv2d(frame)| <= threshold * max_co sum |weight[co]|   (+ float32 rounding)

Only the output tiles (`tile` x `tile` pixels) that an applied change reaches are
updated, by the lesson's `variant`: "delta_update" (default: the convolution of the change
added to the previous output), "delta_compact" (the same from a list of reached tiles),
"tile_mask" (reached tiles recomputed from x_ref) or "dense" (every frame recomputed).
threshold=0 gives the dense result on every frame.

A frame of another size or device, new weights (a changed weight or bias tensor, seen in
eager mode; under torch.compile call reset()), another tile or variant, or reset(), starts
a new sequence. forward returns a new tensor each frame (a copy of the output so far).
The op launches on torch.cuda.current_stream(); the frames of one sequence must come in
stream order. Forward only: the parameters do not require grad, and a frame that does
raises NotImplementedError."""

import math

import torch

from . import _checks, _delta_checks, _launch, _library

_OP = "DeltaConv2d"


# needs_exact_strides: torch.compile hands the op its frame and weights channels_last,
# as traced.
@torch.library.custom_op("conv_lessons::delta_conv2d_", mutates_args=("out", "state"),
                         tags=(torch.Tag.needs_exact_strides,))
def _delta_conv2d_(out: torch.Tensor, state: torch.Tensor, frame: torch.Tensor,
                   weight: torch.Tensor, bias: torch.Tensor, threshold: float, tile: int,
                   variant: str, first: bool) -> None:
    _run(out, state, frame, weight, bias, threshold, tile, variant, first)


def _run(out, state, frame, weight, bias, threshold, tile, variant, first):
    """The op's implementation: its checks, then the frame on the current stream."""
    _delta_checks.check_op(out, state, frame, weight, bias)
    _, c, h, w = frame.shape
    device = frame.device.index
    with _launch.on_device(device):
        _library.delta_frame(device, _launch.stream_handle(device),
                             frame.data_ptr(), weight.data_ptr(), bias.data_ptr(),
                             out.data_ptr(), state.data_ptr(), state.numel(),
                             (h, w, c, weight.shape[2], tile), threshold, first, variant)


@_delta_conv2d_.register_fake
def _delta_conv2d_fake(out, state, frame, weight, bias, threshold, tile, variant, first):
    _delta_checks.check_op(out, state, frame, weight, bias)


def _state_bytes(frame, ksize, tile, variant):
    _, c, h, w = frame.shape
    return _library.delta_plan((h, w, c, ksize, tile), variant)[1]


# An op of its own, so that torch.compile traces a new sequence's allocation too: its
# size comes from the library, which the fake kernel may call and a traced graph may not.
@torch.library.custom_op("conv_lessons::delta_state", mutates_args=())
def _delta_state(frame: torch.Tensor, ksize: int, tile: int, variant: str) -> torch.Tensor:
    return torch.empty(_state_bytes(frame, ksize, tile, variant), dtype=torch.uint8,
                       device=frame.device)


@_delta_state.register_fake
def _delta_state_fake(frame, ksize, tile, variant):
    return frame.new_empty(_state_bytes(frame, ksize, tile, variant), dtype=torch.uint8)


class DeltaConv2d(torch.nn.Module):
    """A C -> C conv layer run frame by frame, recomputing only where the frame changed
    (lesson 11). Its weight (C, C, k, k) is initialised as torch.nn.Conv2d's;
    from_conv2d copies a trained layer's."""

    def __init__(self, channels, kernel_size=3, bias=True, *, threshold=0.02, tile=8,
                 variant="delta_update", device=None):
        super().__init__()
        _delta_checks.check_layer(channels, kernel_size, threshold, tile, variant)
        if not isinstance(bias, bool):
            raise TypeError(f"bias={bias!r}: True or False, as torch.nn.Conv2d's")
        self.threshold, self.tile, self.variant = float(threshold), tile, variant
        weight = torch.empty(channels, channels, kernel_size, kernel_size, device=device)
        # torch.nn.Conv2d's initialisation.
        torch.nn.init.kaiming_uniform_(weight, a=math.sqrt(5))
        bound = 1 / math.sqrt(channels * kernel_size * kernel_size)
        self.weight = torch.nn.Parameter(weight.contiguous(memory_format=torch.channels_last),
                                         requires_grad=False)
        self.bias = torch.nn.Parameter(
            torch.empty(channels, device=device).uniform_(-bound, bound),
            requires_grad=False) if bias else None
        # The sequence: its output so far and the lesson's state (x_ref, the arranged
        # weights, ...), and what it was started with.
        self.register_buffer("out", None, persistent=False)
        self.register_buffer("state", None, persistent=False)
        self._sequence = None

    @classmethod
    def from_conv2d(cls, conv, *, threshold=0.02, tile=8, variant="delta_update"):
        """The delta layer of a torch.nn.Conv2d that lesson 11 runs: C -> C channels, an odd
        square filter up to 7x7, stride 1, "same" zero padding, no dilation, one group."""
        if not isinstance(conv, torch.nn.Conv2d):
            raise TypeError(f"conv is a {type(conv).__name__}, not a torch.nn.Conv2d")
        k = conv.kernel_size
        if conv.in_channels != conv.out_channels:
            raise ValueError(f"a {conv.in_channels} -> {conv.out_channels} channel layer: the "
                             "delta layer maps C channels to C")
        if k[0] != k[1]:
            raise NotImplementedError(f"a {k[0]}x{k[1]} filter: the lesson's filters are square")
        if (conv.stride, conv.dilation, conv.groups, conv.padding_mode) != ((1, 1), (1, 1), 1,
                                                                            "zeros"):
            raise NotImplementedError("stride 1, dilation 1, one group and zero padding only: "
                                      f"this layer has stride={conv.stride}, dilation="
                                      f"{conv.dilation}, groups={conv.groups}, padding_mode="
                                      f"{conv.padding_mode!r}")
        if conv.padding not in ("same", (k[0] // 2, k[1] // 2)):
            raise NotImplementedError(f"padding={conv.padding!r}: the delta layer pads 'same' "
                                      "only")
        layer = cls(conv.in_channels, k[0], conv.bias is not None, threshold=threshold,
                    tile=tile, variant=variant, device=conv.weight.device)
        with torch.no_grad():
            layer.weight.copy_(conv.weight)
            if conv.bias is not None:
                layer.bias.copy_(conv.bias)
        return layer

    def reset(self):
        """The next frame starts a new sequence, computed densely."""
        self._sequence = None

    def _bias(self):
        if self.bias is not None:
            return self.bias
        return torch.zeros(self.weight.shape[0], device=self.weight.device)

    def _sequence_key(self, frame):
        """What a sequence keeps: another frame size, device, tile, variant or weights
        starts a new one (the weights are read on a sequence's first frame alone)."""
        key = (tuple(frame.shape), frame.device, self.tile, self.variant)
        if torch.compiler.is_compiling():
            return key
        return key + tuple((t.data_ptr(), t._version) for t in (self.weight, self.bias)
                           if t is not None)

    def _start(self, frame):
        self.out = torch.empty_like(frame, memory_format=torch.channels_last)
        self.state = torch.ops.conv_lessons.delta_state(frame, self.weight.shape[2], self.tile,
                                                        self.variant)

    def forward(self, frame):
        bias = self._bias()
        _delta_checks.check_frame(frame, self.weight, bias)
        _delta_checks.check_layer(self.weight.shape[0], self.weight.shape[2], self.threshold,
                                  self.tile, self.variant)
        _checks.check_forward_only(_OP, [("frame", frame), ("weight", self.weight),
                                         ("bias", bias)], "torch.nn.Conv2d")
        key = self._sequence_key(frame)
        first = key != self._sequence
        if first:
            self._start(frame)
            self._sequence = key
        weight = self.weight.contiguous(memory_format=torch.channels_last)
        args = (self.out, self.state, frame, weight, bias, self.threshold, self.tile,
                self.variant, first)
        # The op's implementation without its dispatch where nothing would see the
        # difference (conv2d_op.py, _launch.py), its checks included.
        if _launch.runs_eagerly(args[:5]):
            _run(*args)
            _launch.mutated(self.out, self.state)
        else:
            torch.ops.conv_lessons.delta_conv2d_(*args)
        return self.out.clone()

    def extra_repr(self):
        c, _, k, _ = self.weight.shape
        return (f"{c}, {c}, kernel_size={k}, bias={self.bias is not None}, threshold="
                f"{self.threshold}, tile={self.tile}, variant={self.variant!r}")
