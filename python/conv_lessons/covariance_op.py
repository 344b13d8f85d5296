"""covariance: lesson 10's op as the PyTorch custom op torch.ops.conv_lessons.covariance_,
forward only: the covariance of a conv layer's output under weight noise (seed 001),

    out[b,c0,i0,j0,c0,i0',j0'] += c[c0] * S(b, q, q'),
    S(b, q, q') = sum_{ci,di,dj} mu[b,ci,i0+di,j0+dj] * mu[b,ci,i0'+di,j0'+dj]
                                + gamma[b,ci,i0+di,j0+dj,ci,i0'+di,j0'+dj]

over a k x k "valid" window (Ho = H - k + 1, k odd, read from out's shape), in float32
contiguous CUDA tensors, in either of the lesson's layouts (docs/10_covariance.md):

    the seed's   gamma (B, Ci, H, W, Ci, H, W), out (B, Co, Ho, Wo, Co, Ho, Wo), c (Co,):
                 only out's channel-diagonal blocks change; lesson 10's channels_summed
    compact      gamma's diagonal blocks (B, Ci, H, W, H, W), out = S (B, Ho, Wo, Ho, Wo),
                 which stands for the seed's out = c (x) S, so c is not read (None or any
                 1-D tensor); channels_summed_factored, or with symmetric=True
                 channels_summed_symmetric, which reads one triangle of each gamma block:
                 right only where gamma's blocks are symmetric in (p, p'), as a
                 covariance is (the seed's torch.rand toy is not)

mu is (B, Ci, H, W) in both. covariance_(mu, gamma, c, out) adds into out and returns it,
as the seed's op_slow(input, ...) does; covariance(...) returns out plus the term and
leaves out as it was. Both launch on torch.cuda.current_stream(); the fake kernel lets
torch.compile trace them. Bad input raises ValueError, TypeError or NotImplementedError
before any GPU work (_covariance_checks.py); a view that does not start on 16 bytes
raises ValueError (pass a tensor of its own, t.clone()). Forward only: inputs that
require grad, with grad on, raise NotImplementedError (an op in place records no graph).
"""

from typing import Optional

import torch

from . import _checks, _covariance_checks, _launch, _library

_ALTERNATIVE = "the same sum in torch operations"


# needs_exact_strides: torch.compile hands the op contiguous inputs, as traced.
@torch.library.custom_op("conv_lessons::covariance_", mutates_args=("out",),
                         tags=(torch.Tag.needs_exact_strides,))
def _covariance_(mu: torch.Tensor, gamma: torch.Tensor, c: Optional[torch.Tensor],
                 out: torch.Tensor, symmetric: bool = False) -> None:
    _launch_problem(_covariance_checks.check_inputs(mu, gamma, c, out, symmetric), mu, gamma,
                    c, out, symmetric)


def _launch_problem(p, mu, gamma, c, out, symmetric):
    """out += the term of Problem p (the checks' answer for these tensors), on the
    current stream."""
    if p.empty:
        return
    device = mu.device.index
    with _launch.on_device(device):
        _, scratch_bytes = _library.covariance_plan(device, p.shape, p.layout, symmetric)
        # On the current stream: reused only after the kernels, in stream order.
        scratch = torch.empty(scratch_bytes, dtype=torch.uint8,
                              device=mu.device) if scratch_bytes else None
        _library.covariance(device, _launch.stream_handle(device),
                            mu.data_ptr(), gamma.data_ptr(),
                            0 if c is None or p.layout == "compact" else c.data_ptr(),
                            out.data_ptr(), 0 if scratch is None else scratch.data_ptr(),
                            scratch_bytes, p.shape, p.layout, symmetric)


@_covariance_.register_fake
def _covariance_fake(mu, gamma, c, out, symmetric=False):
    _covariance_checks.check_inputs(mu, gamma, c, out, symmetric)


def covariance_(mu, gamma, c, out, *, symmetric=False):
    """Adds lesson 10's covariance term into out, in place (the seed's op_slow), and
    returns out."""
    # Before the op's schema sees the arguments: its errors are not in the user's words.
    p = _covariance_checks.check_inputs(mu, gamma, c, out, symmetric)
    _checks.check_forward_only("covariance_", [("mu", mu), ("gamma", gamma), ("c", c)],
                               _ALTERNATIVE)
    # The op's implementation without its dispatch, where nothing would see the
    # difference (conv2d_op.py, _launch.py); its checks are the ones just made.
    if _launch.runs_eagerly((mu, gamma, c, out)):
        _launch_problem(p, mu, gamma, c, out, symmetric)
        _launch.mutated(out)
    else:
        torch.ops.conv_lessons.covariance_(mu, gamma, c, out, symmetric)
    return out


def covariance(mu, gamma, c, out, *, symmetric=False):
    """out plus lesson 10's covariance term, in a new tensor."""
    p = _covariance_checks.check_inputs(mu, gamma, c, out, symmetric)
    _checks.check_forward_only("covariance", [("mu", mu), ("gamma", gamma), ("c", c),
                                              ("out", out)], _ALTERNATIVE)
    result = out.clone()
    if _launch.runs_eagerly((mu, gamma, c, result)):
        _launch_problem(p, mu, gamma, c, result, symmetric)
    else:
        torch.ops.conv_lessons.covariance_(mu, gamma, c, result, symmetric)
    return result
