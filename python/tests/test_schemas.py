"""The ops' schemas against what torch.compile's inductor does with them, checked without
a GPU. Inductor runs a custom op it cannot lower as a fallback, passing the op's
arguments by name to FallbackKernel.create, whose own first parameter is `kernel`: an
op argument of that name breaks every compiled call (LoweringException, seen on the GPU
when conv2d's schema named its kernel choice `kernel`)."""

import inspect

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import conv_lessons  # noqa: E402,F401  (registers the ops)

OPS = ("conv2d", "binary_conv2d", "covariance_", "delta_conv2d_", "delta_state")


@pytest.mark.parametrize("name", OPS)
def test_no_argument_takes_a_name_inductor_uses(name):
    from torch._inductor.ir import FallbackKernel

    taken = {p.name for p in inspect.signature(FallbackKernel.create).parameters.values()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    schema = getattr(torch.ops.conv_lessons, name).default._schema
    assert not taken & {a.name for a in schema.arguments}, str(schema)
