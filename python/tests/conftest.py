"""The fixture the C ABI's tests share."""

import pytest


@pytest.fixture(scope="session")
def lib():
    """libconv_torch.so through ctypes (its argument types declared), or the test skipped
    with the reason."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    from conv_lessons import _library

    try:
        return _library.library()
    except RuntimeError as e:
        pytest.skip(f"libconv_torch.so is not built: {e}")
