"""Draws the PyTorch page's call path to docs/img/13_call_path.png.

    python3 plots/diagrams/13_call_path.py

One call of conv_lessons.conv2d, top to bottom: the checks on the tensors' metadata (the
same for the real kernel and the fake one), the custom op that torch.compile sees, the
C library reached through ctypes, and the lesson's kernel queued on PyTorch's current
stream. On the left, the eager call's shortcut: with nothing that needs the dispatcher
(no torch.compile, gradient, fake tensors, modes or profiler) the checks go straight to
the C library. Beside it, torch.compile's path: the fake kernel alone, which gives the
output's shape, dtype and strides without running anything.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402
from diagram import save  # noqa: E402

PYTHON_COLOUR = "#dbe8f5"
C_COLOUR = "#f6e3c4"
GPU_COLOUR = "#d5ecd4"
FAKE_COLOUR = "#eeeeee"
ERROR_COLOUR = "#b03030"

# (x centre, y centre, width, title, detail, colour)
STEPS = (
    (3.0, 9.0, 5.2, "y = conv_lessons.conv2d(x, w, b)", "conv2d_op.py: the user's call",
     PYTHON_COLOUR),
    (3.0, 7.3, 5.2, "checks on the metadata", "device, dtype, layout, shape: _checks.py",
     PYTHON_COLOUR),
    (3.0, 5.6, 5.2, "torch.ops.conv_lessons.conv2d", "@torch.library.custom_op: one node for "
     "torch.compile", PYTHON_COLOUR),
    (3.0, 3.9, 5.2, "libconv_torch.so through ctypes", "conv_torch.h: a status and one error "
     "line, never exit()", C_COLOUR),
    (3.0, 2.2, 5.2, "the lesson's launcher", "05, 07 or 08: the fastest for the shape",
     C_COLOUR),
    (3.0, 0.5, 5.2, "the kernel, on the current stream", "torch.cuda.current_stream(): in "
     "order with PyTorch's work", GPU_COLOUR),
)
FAKE = (8.6, 5.6, 3.4, "the fake kernel", "register_fake: shape, dtype,\nstrides; no GPU work",
        FAKE_COLOUR)


def step(ax, x, y, w, title, detail, colour):
    ax.add_patch(FancyBboxPatch((x - w / 2, y - 0.55), w, 1.1, boxstyle="round,pad=0.05",
                                facecolor=colour, edgecolor="#666666", linewidth=0.8))
    ax.text(x, y + 0.2, title, ha="center", va="center", fontsize=9.5, family="monospace")
    ax.text(x, y - 0.25, detail, ha="center", va="center", fontsize=8, color="#333333")


def arrow(ax, start, end, colour="#555555", style="-|>"):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=9, color=colour,
                                 linewidth=0.9, shrinkA=0, shrinkB=0))


def main():
    fig, ax = plt.subplots(figsize=(11, 6.6))
    for s in STEPS:
        step(ax, *s)
    for upper, lower in zip(STEPS, STEPS[1:]):
        arrow(ax, (upper[0], upper[1] - 0.6), (lower[0], lower[1] + 0.6))
    ax.text(3.15, 6.45, "torch.compile, gradient, modes", ha="left", va="center", fontsize=7.5)
    # The eager shortcut: the op's code runs without the dispatcher (11 us less a call).
    ax.add_patch(FancyArrowPatch((0.4, 7.3), (0.4, 3.9), arrowstyle="-|>", mutation_scale=9,
                                 color="#4c72b0", linewidth=0.9, shrinkA=0, shrinkB=0,
                                 connectionstyle="bar,fraction=0.15"))
    ax.text(-0.45, 5.6, "eager, nothing\nneeds the\ndispatcher:\nstraight on", ha="right",
            va="center", fontsize=7.5, color="#4c72b0")
    step(ax, *FAKE)
    arrow(ax, (5.7, 5.6), (6.85, 5.6))
    ax.text(6.25, 5.85, "torch.compile\ntraces", ha="center", va="bottom", fontsize=7.5)
    # A bad call stops at the checks, before any GPU work, with a Python exception.
    arrow(ax, (5.65, 7.3), (7.2, 7.3), colour=ERROR_COLOUR)
    ax.text(7.3, 7.3, "ValueError, TypeError,\nNotImplementedError:\nthe user's words",
            ha="left", va="center", fontsize=8, color=ERROR_COLOUR)
    ax.text(-2.0, 7.3, "Python", fontsize=8, color="#4c72b0", rotation=90, va="center")
    ax.text(-2.0, 3.05, "C", fontsize=8, color="#a0702a", rotation=90, va="center")
    ax.text(-2.0, 0.5, "GPU", fontsize=8, color="#3a7d3a", rotation=90, va="center")
    ax.set_xlim(-2.2, 11)
    ax.set_ylim(-0.3, 9.8)
    ax.axis("off")
    ax.set_title("One call of conv_lessons.conv2d", fontsize=11)
    save(fig, "13_call_path.png")


if __name__ == "__main__":
    main()
