"""What the op tests share about fake tensors: an op called on fake CUDA tensors runs its
fake kernel, and so its checks, without a GPU. Imported after
pytest.importorskip("torch")."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode


def assert_fake_raises(op, args, exception, match):
    """op(*args) on fake tensors raises exception, its message matching match, as the real
    kernel does; each tuple in args stands for a fake float32 CUDA tensor of that shape."""
    with FakeTensorMode():
        args = [torch.empty(a, device="cuda") if isinstance(a, tuple) else a for a in args]
        with pytest.raises(exception, match=match):
            op(*args)
