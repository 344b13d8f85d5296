"""What lesson 10's covariance kernels accept, checked on the tensors' metadata alone (so
the real kernel and the fake one raise alike, before any GPU work), in the exceptions of
_checks.py. The layout follows from gamma's rank: 7, the seed's (B, Ci, H, W, Ci, H, W),
or 6, the compact diagonal blocks (B, Ci, H, W, H, W)."""

from typing import NamedTuple

from ._checks import (MAX_KSIZE, check_contiguous, check_device, check_float32,
                      check_tensors)

_OP = "covariance"


class Problem(NamedTuple):
    """The op's sizes, as the C ABI takes them (covariance.h), and its layout."""
    b: int
    ci: int
    co: int
    h: int
    w: int
    ksize: int
    layout: str  # "seed" or "compact"

    @property
    def shape(self):
        return (self.b, self.ci, self.co, self.h, self.w, self.ksize)

    @property
    def empty(self):
        """Nothing to add: no batch, no output channel or no input channel (S = 0)."""
        return self.b == 0 or self.co == 0 or self.ci == 0


def _expect(name, t, shape, what):
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(t.shape)}; for {what} it must be "
                         f"{tuple(shape)}")


def _layout_of(gamma):
    if gamma.dim() == 7:
        return "seed"
    if gamma.dim() == 6:
        return "compact"
    raise ValueError(f"gamma has shape {tuple(gamma.shape)}; it must be 7-D, the seed's "
                     "(B, Ci, H, W, Ci, H, W), or 6-D, its diagonal blocks (B, Ci, H, W, H, W)")


def _window(mu, out, layout):
    """k from the output's image (Ho = H - k + 1), as the lesson reads the seed's files."""
    _, _, h, w = mu.shape
    ho, wo = (out.shape[2], out.shape[3]) if layout == "seed" else (out.shape[1], out.shape[2])
    if ho < 1 or wo < 1 or ho > h or wo > w:
        raise ValueError(f"out's image is {ho}x{wo} for a {h}x{w} input: a valid window "
                         "leaves 1 to H rows and 1 to W columns")
    if h - ho != w - wo:
        raise NotImplementedError(f"a {h - ho + 1}x{w - wo + 1} window ({h}x{w} in, {ho}x{wo} "
                                  "out): the lesson's windows are square")
    k = h - ho + 1
    if k % 2 == 0 or k > MAX_KSIZE:
        raise NotImplementedError(f"a {k}x{k} window: the lesson's windows are odd, 1x1 to "
                                  f"{MAX_KSIZE}x{MAX_KSIZE}")
    return k


def check_inputs(mu, gamma, c, out, symmetric):
    """The Problem, or the exception that says what is wrong."""
    named = [("mu", mu), ("gamma", gamma), ("out", out)] + ([("c", c)] if c is not None else [])
    check_tensors(named)
    if not isinstance(symmetric, bool):
        raise TypeError(f"symmetric={symmetric!r}: give True or False")
    for name, t in named:
        check_device(_OP, name, t, "mu", mu)
    for name, t in named:
        check_float32(_OP, name, t)
    if mu.dim() != 4:
        raise ValueError(f"mu has shape {tuple(mu.shape)}; it must be 4-D: (B, Ci, H, W)")
    layout = _layout_of(gamma)
    b, ci, h, w = mu.shape
    if layout == "seed":
        _expect("gamma", gamma, (b, ci, h, w, ci, h, w), f"mu of shape {tuple(mu.shape)}")
        if out.dim() != 7:
            raise ValueError(f"out has shape {tuple(out.shape)}; with the seed's 7-D gamma it "
                             "is the seed's 7-D output (B, Co, Ho, Wo, Co, Ho, Wo)")
        co = out.shape[1]
        k = _window(mu, out, layout)
        ho, wo = h - k + 1, w - k + 1
        _expect("out", out, (b, co, ho, wo, co, ho, wo), "the seed's layout")
        if c is None:
            raise ValueError("c is None: the seed's layout multiplies each output block by "
                             f"c[c0]; give c of shape ({co},)")
        _expect("c", c, (co,), f"out's {co} output channels")
        if symmetric:
            raise NotImplementedError("symmetric=True: the symmetric kernel writes the compact "
                                      "layout only (a 6-D gamma and out = S)")
    else:
        _expect("gamma", gamma, (b, ci, h, w, h, w), f"mu of shape {tuple(mu.shape)}")
        if out.dim() != 5:
            flat = (" (S flattened to (B, Ho*Wo, Ho*Wo), as the lesson indexes it, is the "
                    "same memory: pass out.view(B, Ho, Wo, Ho, Wo))" if out.dim() == 3 else "")
            raise ValueError(f"out has shape {tuple(out.shape)}; with the compact 6-D gamma it "
                             f"is S, (B, Ho, Wo, Ho, Wo){flat}")
        k = _window(mu, out, layout)
        ho, wo = h - k + 1, w - k + 1
        _expect("out", out, (b, ho, wo, ho, wo), "the compact layout")
        if c is not None and c.dim() != 1:
            raise ValueError(f"c has shape {tuple(c.shape)}; it must be 1-D, one value per "
                             "output channel")
        co = 1  # S stands for out = c (x) S: c is not read
    for name, t in named:
        check_contiguous(name, t)
    return Problem(b, ci, co, h, w, k, layout)
