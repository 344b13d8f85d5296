"""What every op's launch shares, kept to the few microseconds a call can afford (issue
31's target: at most 5 us above the kernel in eager mode):

    runs_eagerly     whether conv_lessons.conv2d(...) and its siblings may run the op's
                     implementation themselves instead of through torch.ops, whose
                     dispatch (the autograd wrapper of torch.library.custom_op, its
                     redispatch, the backend wrapper that turns torch.compile off) costs
                     more than the rest of the call; the checks are the same either way
    on_device        torch.cuda.device(index), or nothing where it is current already
    stream_handle    torch.cuda.current_stream(index).cuda_stream without the Stream
                     object that current_stream builds
    mutated          what the dispatcher does for an op that writes its arguments: their
                     version counters move on, so that autograd refuses a tensor it saved
                     and the op then changed"""

import contextlib

import torch

_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _private(name):
    """A function of torch._C, or None where this PyTorch has none (then the slower,
    public way is taken)."""
    return getattr(torch._C, name, None)


_dispatch_modes = _private("_len_torch_dispatch_stack")
_function_modes = _private("_len_torch_function_stack")
_functorch_active = _private("_are_functorch_transforms_active")
_raw_stream = _private("_cuda_getCurrentRawStream")
_FAST = None not in (_dispatch_modes, _function_modes, _functorch_active)


def runs_eagerly(tensors):
    """True where the dispatcher would hand the call straight to the op's CUDA
    implementation, and nothing would see that it was not asked: every tensor (None
    skipped) a plain torch.Tensor or Parameter on a CUDA device; none requiring grad while
    grad is on (autograd must record the op, whose backward raises the forward-only
    error); not under torch.compile, a dispatch or torch-function mode (FakeTensorMode,
    make_fx, FlopCounterMode, `with torch.device(...)`), a functorch transform (vmap,
    grad) or the profiler, which shows the op by its name. Anywhere else the call goes
    through torch.ops."""
    if (not _FAST or torch.compiler.is_compiling() or _dispatch_modes() or _function_modes()
            or _functorch_active() or torch.autograd.profiler._is_profiler_enabled):
        return False
    grad = torch.is_grad_enabled()
    for t in tensors:
        if t is None:
            continue
        if type(t) not in _PLAIN or not t.is_cuda or (grad and t.requires_grad):
            return False
    return True


_NOTHING = contextlib.nullcontext()


def on_device(index):
    """The device guard around a launch: the library selects `index` for its own launches
    (cudaSetDevice), which would leave it current for PyTorch too; where it is current
    already there is nothing to restore, and the guard's cost is spared."""
    if index == torch.cuda.current_device():
        return _NOTHING
    return torch.cuda.device(index)


def mutated(*tensors):
    """The tensors an op implementation wrote, run without the dispatcher: their versions
    moved on as the dispatcher moves them for an op of mutates_args."""
    torch.autograd.graph.increment_version(tensors)


def stream_handle(index):
    """The cudaStream_t of torch.cuda.current_stream(index), as an integer."""
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream
