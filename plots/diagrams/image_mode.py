"""Image mode, before and after: data/camera.pgm blurred and edge-filtered.

    python3 plots/diagrams/image_mode.py [LESSON]

Runs LESSON (default build/bin/01_cpu_direct: the CPU lesson, so any machine can draw
this) in image mode on data/camera.pgm with each filter of FILTERS, reads back the PGM
files it writes and draws docs/img/image_mode.png: the picture before, then after each
filter. Every lesson's image mode applies the same named filter, verified against the
same float64 reference, so the GPU lessons write the same pictures up to float
rounding. The panels show CROP of the 512x512 image at one screen pixel per image
pixel, where a 9x9 blur is still visible.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from diagram import save  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "data" / "camera.pgm"
DEFAULT_LESSON = ROOT / "build" / "bin" / "01_cpu_direct"
# (--filter, --ksize, panel title)
FILTERS = (("gaussian", 9, "gaussian, 9x9: blurred"),
           ("sobel-x", 3, "sobel-x, 3x3: vertical edges"))
CROP = (slice(40, 296), slice(150, 406))  # rows, columns: the photographer and camera
DPI = 100
PANEL_INCHES = 256 / DPI  # the crop's 256 pixels at one output pixel each
GAP_INCHES = 0.1
TITLE_INCHES = 0.3
PIXEL_MAX = 255


def read_pgm(path):
    """A binary PGM (P5, maxval 255, no comments: what the lessons write) as a uint8 array."""
    data = path.read_bytes()
    fields = data.split(maxsplit=4)
    if len(fields) < 5 or fields[0] != b"P5" or int(fields[3]) != PIXEL_MAX:
        sys.exit(f"image_mode.py: {path}: not a P5 PGM with maxval {PIXEL_MAX}")
    width, height = int(fields[1]), int(fields[2])
    pixels = data[len(data) - width * height:]
    return np.frombuffer(pixels, dtype=np.uint8).reshape(height, width)


def filtered(lesson, name, ksize, folder):
    out = Path(folder) / f"{name}.pgm"
    subprocess.run([str(lesson), "--image", str(IMAGE), "--filter", name, "--ksize",
                    str(ksize), "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    return read_pgm(out)


def main():
    lesson = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_LESSON
    panels = [("data/camera.pgm: before", read_pgm(IMAGE))]
    with tempfile.TemporaryDirectory() as folder:
        panels += [(title, filtered(lesson, name, ksize, folder))
                   for name, ksize, title in FILTERS]
    width = len(panels) * PANEL_INCHES + (len(panels) - 1) * GAP_INCHES
    height = PANEL_INCHES + TITLE_INCHES
    fig = plt.figure(figsize=(width, height))
    for i, (title, pixels) in enumerate(panels):
        left = i * (PANEL_INCHES + GAP_INCHES)
        ax = fig.add_axes((left / width, 0, PANEL_INCHES / width, PANEL_INCHES / height))
        ax.imshow(pixels[CROP], cmap="gray", vmin=0, vmax=PIXEL_MAX, interpolation="nearest")
        ax.set_title(title, fontsize="small")
        ax.axis("off")
    save(fig, "image_mode.png", dpi=DPI)


if __name__ == "__main__":
    main()
