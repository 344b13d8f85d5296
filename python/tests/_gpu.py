"""What the op tests share about the GPU: the skip without one, its compute capability,
and a way to keep a stream busy. Imported after pytest.importorskip("torch")."""

import pytest
import torch

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(),
                               reason="no CUDA GPU: torch.cuda.is_available() is False")

SLEEP_CYCLES = 50_000_000  # tens of milliseconds: long enough for a wrong order to show


def capability():
    """The current GPU's compute capability x 10 (75, 80, 90, ...)."""
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


def busy_side_stream():
    """A side stream that waits for the current one and then sleeps: work queued on it
    after this runs late, so a kernel on another stream would read its inputs unwritten."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
    return side
