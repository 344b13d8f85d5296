#!/usr/bin/env python3
"""Tests tests/check_plots_fresh.py on a folder of its own: a PNG drawn with the rows it
read recorded (plots/provenance.py, as the plot scripts do) passes while those rows stay
as they were, and fails when one of them changes or one is added to its selection, when
its CSV is gone, or when a results plot carries no record.

    python3 tests/test_check_plots_fresh.py [CHECK_PLOTS_FRESH_PY]

Exit 77 (skipped) when this Python has no matplotlib, which draws the PNG.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib
from pathlib import Path

SCRIPT = Path(sys.argv[1] if len(sys.argv) > 1 else
              Path(__file__).resolve().with_name("check_plots_fresh.py")).resolve()
sys.path.insert(0, str(SCRIPT.parents[1] / "plots"))
import provenance  # noqa: E402

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib not available: skipped")
    sys.exit(77)

HEADER = "lesson,variant,preset,device,median_ms,status"
ROWS = ["05_register_tiling,strip_ring,big3,Test GPU 9000,1.25,PASS",
        "05_register_tiling,cudnn,big3,Test GPU 9000,2.50,PASS",
        "06_separable,full_2d,big3,Test GPU 9000,1.00,PASS"]
CSV = "results/test/bench.csv"
PLOT = "docs/img/test-gpu-9000_05_register_tiling_time.png"  # the device's slug first


class CheckPlotsFresh(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="test_check_plots_fresh."))
        self.addCleanup(shutil.rmtree, self.root)
        (self.root / "docs" / "img").mkdir(parents=True)
        self.write_csv(ROWS)
        self.draw(PLOT, {"lesson": ["05_register_tiling"]})

    def write_csv(self, rows):
        path = self.root / CSV
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([HEADER] + rows) + "\n", encoding="utf-8")

    def draw(self, name, where=None):
        """A tiny chart, saved as the scripts save theirs; where=None: no record."""
        fig, ax = plt.subplots(figsize=(1, 1))
        ax.plot([0, 1], [0, 1])
        meta = None
        if where is not None:
            meta = provenance.metadata(__file__, [
                provenance.source(self.root / CSV, where, root=self.root)])
        fig.savefig(self.root / name, dpi=20, metadata=meta)
        plt.close(fig)

    def check(self):
        run = subprocess.run([sys.executable, str(SCRIPT), str(self.root)],
                             capture_output=True, text=True)
        return run.returncode, run.stdout + run.stderr

    def assert_fresh(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)

    def assert_stale(self, name, words):
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        self.assertIn(f"{name}: ", out)
        self.assertIn(words, out)

    def test_fresh(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("1 plots match", out)

    def test_record_names_csv_relative_to_root(self):
        with open(self.root / PLOT, "rb") as f:
            data = f.read()
        self.assertIn(b'"csv":"results/test/bench.csv"', data)
        self.assertIn(b'"rows":2', data)

    def test_edited_row_is_stale(self):
        self.write_csv([ROWS[0].replace("1.25", "1.26")] + ROWS[1:])
        self.assert_stale(PLOT, "changed since it was drawn (2 rows then, 2 now)")

    def test_appended_row_of_the_selection_is_stale(self):
        self.write_csv(ROWS + ["05_register_tiling,strip_ring,big3,Test GPU 9000,1.20,PASS"])
        self.assert_stale(PLOT, "(2 rows then, 3 now)")

    def test_rows_outside_the_selection_and_their_order_do_not_matter(self):
        self.write_csv([ROWS[1], ROWS[2].replace("1.00", "0.90"), ROWS[0]])
        self.assert_fresh()

    def test_missing_csv_is_stale(self):
        (self.root / CSV).unlink()
        self.assert_stale(PLOT, "no such file")

    def test_results_plot_without_record_is_stale(self):
        for name in ("docs/img/test-gpu-9000_unet.png", "docs/img/compare_a_b_05.png",
                     "docs/img/04_crossover.png"):
            with self.subTest(name=name):
                self.draw(name)
                self.assert_stale(name, "no record of the rows it drew")
                (self.root / name).unlink()

    def test_diagram_without_record_is_passed_over(self):
        self.draw("docs/img/04_tiles.png")
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("1 other PNGs", out)

    def test_compressed_itxt_record_is_read(self):
        path = self.root / PLOT
        path.write_bytes(text_to_itxt(path.read_bytes()))
        self.assertNotIn(b"tEXtconv-plot", path.read_bytes())
        self.assert_fresh()
        self.write_csv([ROWS[0].replace("big3", "big5")] + ROWS[1:])
        self.assert_stale(PLOT, "changed since it was drawn")

    def test_not_a_png_is_stale(self):
        (self.root / PLOT).write_bytes(b"GIF89a")
        self.assert_stale(PLOT, "not a PNG file")


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def text_to_itxt(data):
    """The PNG with its tEXt chunks rewritten as zlib-compressed iTXt chunks."""
    out, at = [data[:8]], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"tEXt":
            key, _, text = body.partition(b"\0")
            out.append(chunk(b"iTXt", key + b"\0\x01\x00" + b"\0" + b"\0" + zlib.compress(text)))
        else:
            out.append(data[at:at + 12 + length])
        at += 12 + length
    return b"".join(out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
