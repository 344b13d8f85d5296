#!/usr/bin/env python3
"""Tests scripts/pytorch_covariance.py where no GPU is needed.

    python3 tests/test_pytorch_covariance.py [PYTORCH_COVARIANCE_PY]

The pure parts with the standard library only: the preset lines of --list-presets, the
op's minimum bytes and FLOPs (covariance.c cov_min_bytes, cov_flops) against
docs/10_covariance.md and sums done by hand, the buffer sets, the tolerance, the CSV
(header as common/measure/report.h's, appended as the harness appends), the command line
(exit 2 on bad arguments) and the machine without PyTorch or without a GPU (exit 0,
nothing written; a fake `torch` package on PYTHONPATH stands for both, so the test means
the same where PyTorch is installed). Where PyTorch imports, its CPU also runs the
script's vectorised op, draws, gold and check on small shapes against the op summed
loop by loop as the seed's op_slow does.
"""
import csv
import importlib.util
import math
import os
import re
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "pytorch_covariance.py"


def load(path):
    spec = importlib.util.spec_from_file_location("pytorch_covariance", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pc = load(SCRIPT)  # the module under test (main loads another one named in argv)

try:
    import torch
except ImportError:
    torch = None

LIST_PRESETS = """\
cov-toy         n=2 cin=3 cout=3 9x9 ksize=3  the seed's toy covariance: batch 2, 3 -> 3 channels
cov-b8c16s16    n=8 cin=16 cout=16 16x16 ksize=3  covariance, batch 8, 16 channels, 16x16
cov-b4c32s18    n=4 cin=32 cout=32 18x18 ksize=3  covariance, batch 4, 32 channels, 18x18
"""


def shape(n, cin, cout, h, w, k):
    return pc.Shape(n, cin, cout, h, w, k)


class PurePartsTest(unittest.TestCase):
    def test_header_is_report_h(self):
        text = (ROOT / "common" / "measure" / "report.h").read_text()
        start = text.index("#define CSV_HEADER")
        end = text.index("\n\n", start)
        header = "".join(re.findall(r'"([^"]*)"', text[start:end]))
        self.assertEqual(pc.CSV_HEADER, header)

    def test_preset_lines(self):
        presets = pc.parse_presets(
            LIST_PRESETS + "seed000         n=1 cin=1 cout=1 64x48 ksize=5 bias  with a bias\n"
            "not a preset line\n  indented n=1 cin=1 cout=1 2x2 ksize=1\n")
        self.assertEqual(list(presets), ["cov-toy", "cov-b8c16s16", "cov-b4c32s18", "seed000"])
        self.assertEqual(presets["cov-b4c32s18"], shape(4, 32, 32, 18, 18, 3))
        self.assertEqual(presets["seed000"], shape(1, 1, 1, 64, 48, 5))
        self.assertEqual(pc.parse_presets(""), {})

    def test_select_presets(self):
        presets = pc.parse_presets(LIST_PRESETS)
        chosen = pc.select_presets(presets, ["cov-b4c32s18", "cov-toy"])
        self.assertEqual([n for n, _ in chosen], ["cov-b4c32s18", "cov-toy"])
        with self.assertRaisesRegex(pc.UsageError, "unknown cov-32, cov-16"):
            pc.select_presets(presets, ["cov-toy", "cov-32", "cov-16"])

    def test_min_bytes_and_flops_of_the_docs(self):
        # docs/10_covariance.md's traffic table (blocks MB, GFLOP (blocks)); the full
        # layout has the same minimum.
        for s, mb, gflop in ((shape(8, 16, 16, 16, 16, 3), 73.0, 0.143),
                             (shape(4, 32, 32, 18, 18, 3), 121.0, 0.243)):
            for layout in pc.LAYOUTS:
                self.assertAlmostEqual(pc.cov_min_bytes(s, layout) / 1e6, mb, places=1)
                self.assertAlmostEqual(pc.cov_flops(s, layout) / 1e9, gflop, places=3)
        # A variant reading gamma's upper triangle only reads B*Ci*P*(P-1)/2 floats less.
        s = shape(4, 16, 16, 32, 32, 3)
        self.assertEqual(pc.cov_min_bytes(s, pc.BLOCKS) - pc.cov_min_bytes(s, pc.BLOCKS, True),
                         4.0 * 4 * 16 * 1024 * 1023 / 2)

    def test_min_bytes_and_flops_by_hand(self):
        # 4*(B*Ci*P^2 + B*Ci*P + Co + 2*B*Co*Q^2) and B*Q^2*(3*Ci*k^2 + 2*Co), summed by
        # hand; the same numbers as covariance.c's functions compiled and run.
        cases = {
            (8, 16, 16, 16, 16, 3): (73023552, 142600192),    # P 256, Q 196
            (4, 32, 32, 18, 18, 3): (121022592, 243269632),   # P 324, Q 256
            (2, 3, 3, 9, 9, 3): (274668, 417774),             # P 81, Q 49
            (3, 5, 7, 11, 6, 4): (362116, 438912),            # P 66, Q 24: h != w, even k
            (4, 16, 16, 32, 32, 3): (683417664, 1503360000),  # P 1024, Q 900
            (4, 64, 64, 16, 16, 3): (146047232, 285200384),   # P 256, Q 196
        }
        for dims, (nbytes, flops) in cases.items():
            for layout in pc.LAYOUTS:
                self.assertEqual(pc.cov_min_bytes(shape(*dims), layout), nbytes, dims)
                self.assertEqual(pc.cov_flops(shape(*dims), layout), flops, dims)
        with self.assertRaises(ValueError):
            pc.cov_min_bytes(shape(*next(iter(cases))), "factored")

    def test_set_bytes(self):
        s = shape(4, 32, 32, 18, 18, 3)
        # The full layout of the largest preset: 1.72 GB of gamma, 1.07 GB of output.
        self.assertEqual(pc.set_bytes(s, pc.FULL),
                         4 * (4 * 32 * 324 + 4 * 32 * 324 * 32 * 324 + 32 + 4 * 32 * 256 * 32 * 256))
        self.assertEqual(pc.set_bytes(s, pc.BLOCKS),
                         4 * (4 * 32 * 324 + 4 * 32 * 324 * 324 + 32 + 4 * 32 * 256 * 256))

    def test_buffer_sets(self):
        mb = 1 << 20
        self.assertEqual(pc.buffer_sets_for(87 * mb, 50 * mb, 80 << 30), 3)
        self.assertEqual(pc.buffer_sets_for(2800 * mb, 50 * mb, 80 << 30), 1)
        self.assertEqual(pc.buffer_sets_for(1 * mb, 60 * mb, 80 << 30), 32)
        self.assertEqual(pc.buffer_sets_for(10 * mb, 60 * mb, 60 * mb), 3)  # memory-bound
        self.assertEqual(pc.buffer_sets_for(10 * mb, 60 * mb, 1 * mb), 1)

    def test_tolerance(self):
        self.assertEqual(pc.rtol_for(shape(4, 32, 32, 18, 18, 3)),
                         8 * math.sqrt(2 * 32 * 9 + 2) * 2.0 ** -24)

    def test_shape_problem(self):
        self.assertIsNone(pc.shape_problem(shape(1, 1, 1, 3, 3, 3)))
        self.assertIn("larger", pc.shape_problem(shape(1, 1, 1, 3, 2, 3)))
        self.assertIn("at least 1", pc.shape_problem(shape(0, 1, 1, 3, 3, 3)))

    def test_row(self):
        s = shape(8, 16, 16, 16, 16, 3)
        result = pc.Check(True, 1.25e-7, 3.5e-6, 10, 0, None)
        row = pc.make_row("cov-b8c16s16", s, pc.BLOCKS, "NVIDIA H100, PCIe", 0.05, 0.04,
                          4000.0, result, "torch=2.4.0;tf32=off;sets=3", "abc1234",
                          "2026-01-02T03:04:05Z")
        self.assertEqual(list(row), pc.FIELDS)
        self.assertEqual(row["gbps"], "%.2f" % (73023552 / 0.05e-3 / 1e9))
        self.assertEqual(row["gflops"], "%.2f" % (142600192 / 0.05e-3 / 1e9))
        self.assertEqual(row["roofline_pct"], "%.2f" % (100 * 73023552 / 4000e9 * 1e3 / 0.05))
        self.assertEqual((row["cudnn_ms"], row["vs_cudnn"]), ("", ""))
        self.assertEqual((row["rel_err"], row["max_abs_err"], row["status"]),
                         ("1.250e-07", "3.500e-06", "PASS"))
        failed = pc.make_row("cov-toy", s, pc.FULL, "GPU", 1.0, 1.0, 0, pc.Check(
            False, math.nan, math.inf, 10, 1, "x"), "", "c", "d")
        self.assertEqual((failed["rel_err"], failed["max_abs_err"], failed["status"],
                          failed["roofline_pct"]), ("nan", "inf", "FAIL", ""))

    def test_append_rows(self):
        s = shape(2, 3, 3, 9, 9, 3)
        row = pc.make_row("cov-toy", s, pc.FULL, 'GPU "x", y', 1.0, 1.0, 100.0,
                          pc.Check(True, 0.0, 0.0, 1, 0, None), "torch=2.4.0", "c", "d")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.csv")
            self.assertIsNone(pc.csv_problem(path))      # missing: created with the header
            pc.append_rows(path, [row])
            pc.append_rows(path, [row, row])
            data = Path(path).read_bytes()
            self.assertNotIn(b"\r", data)
            lines = data.decode().splitlines()
            self.assertEqual(lines[0], pc.CSV_HEADER)
            self.assertEqual(len(lines), 4)
            self.assertIn(',"GPU ""x"", y",', lines[1])
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(rows[2]["device"], 'GPU "x", y')
            self.assertEqual(rows[0]["layout"], "full")
            self.assertIsNone(pc.csv_problem(path))
            # A torn last line gets its newline first; an empty file its header.
            with open(path, "a") as f:
                f.write("torn")
            pc.append_rows(path, [row])
            self.assertEqual(Path(path).read_text().splitlines()[-2], "torn")
            open(path, "w").close()
            self.assertIsNone(pc.csv_problem(path))
            pc.append_rows(path, [row])
            self.assertEqual(Path(path).read_text().splitlines()[0], pc.CSV_HEADER)

    def test_csv_problems(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIn("directory", pc.csv_problem(tmp))
            self.assertIn("does not exist", pc.csv_problem(os.path.join(tmp, "no", "b.csv")))
            other = os.path.join(tmp, "other.csv")
            Path(other).write_text("a,b,c\n1,2,3\n")
            self.assertIn("CSV_HEADER", pc.csv_problem(other))

    def test_commit(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(pc.commit(tmp), "none")          # no .git, no .commit
            Path(tmp, ".commit").write_text("1234abc-dirty\nmore\n")
            self.assertEqual(pc.commit(tmp), "1234abc-dirty")

    def test_arguments(self):
        args = pc.parse_args(["--csv", "b.csv", "--lesson-bin", "x", "--presets", "a", "b"])
        self.assertEqual((args.reps, args.warmup, args.seed, args.presets),
                         (50, 5, 1, ["a", "b"]))
        args = pc.parse_args(["--csv", "b.csv", "--lesson-bin", "x", "--presets", "a",
                              "--reps", "3", "--warmup", "0"])
        self.assertEqual((args.reps, args.warmup), (3, 0))


class CommandLineTest(unittest.TestCase):
    """The script as gpu-check.sh runs it, with a `torch` that cannot help."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.lesson = self.dir / "10_covariance"
        self.lesson.write_text("#!/bin/sh\n[ \"$1\" = --list-presets ] || exit 9\ncat <<'EOF'\n"
                               + LIST_PRESETS + "EOF\n")
        self.lesson.chmod(self.lesson.stat().st_mode | stat.S_IXUSR)
        self.csv = self.dir / "bench.csv"
        self.csv.write_text(pc.CSV_HEADER + "\n")
        self.set_torch("raise ImportError('no torch in this test')")

    def tearDown(self):
        self.tmp.cleanup()

    def set_torch(self, body):
        """A package `torch` on PYTHONPATH, ahead of any installed one."""
        fake = self.dir / "fake" / "torch"
        fake.mkdir(parents=True, exist_ok=True)
        (fake / "__init__.py").write_text(textwrap.dedent(body) + "\n")

    def run_script(self, *args):
        env = dict(os.environ, PYTHONPATH=str(self.dir / "fake"))
        p = subprocess.run([sys.executable, str(pc.__file__), *args], capture_output=True,
                           text=True, env=env, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def good_args(self, *more):
        return ("--csv", str(self.csv), "--lesson-bin", str(self.lesson), "--presets",
                "cov-toy", "cov-b8c16s16", "cov-b4c32s18", *more)

    def assert_untouched(self, before):
        self.assertEqual(self.csv.read_bytes(), before)

    def test_no_torch_exits_0_and_writes_nothing(self):
        before = self.csv.read_bytes()
        mtime = self.csv.stat().st_mtime_ns
        rc, out, err = self.run_script(*self.good_args())
        self.assertEqual(rc, 0, err)
        self.assertIn("skipped: PyTorch is not installed", out)
        self.assert_untouched(before)
        self.assertEqual(self.csv.stat().st_mtime_ns, mtime)

    def test_no_torch_leaves_a_missing_csv_missing(self):
        self.csv.unlink()
        rc, out, err = self.run_script(*self.good_args())
        self.assertEqual(rc, 0, err)
        self.assertFalse(self.csv.exists())

    def test_no_gpu_exits_0_and_writes_nothing(self):
        self.set_torch("""
            __version__ = "0.0-fake"
            class cuda:
                @staticmethod
                def is_available():
                    return False
            """)
        before = self.csv.read_bytes()
        rc, out, err = self.run_script(*self.good_args())
        self.assertEqual(rc, 0, err)
        self.assertIn("skipped: PyTorch sees no CUDA GPU", out)
        self.assert_untouched(before)

    def test_bad_arguments_exit_2(self):
        before = self.csv.read_bytes()
        cases = [
            ((), "required"),
            (self.good_args("--reps", "0"), "--reps"),
            (self.good_args("--warmup", "-1"), "--warmup"),
            (self.good_args("--reps", "many"), "--reps"),
            (("--csv", str(self.csv), "--lesson-bin", str(self.lesson), "--presets",
              "cov-toy", "cov-32"), "unknown cov-32"),
            (("--csv", str(self.csv), "--lesson-bin", str(self.dir / "missing"),
              "--presets", "cov-toy"), "cannot run it"),
            (("--csv", str(self.csv), "--lesson-bin", "/bin/false", "--presets", "cov-toy"),
             "exited 1"),
            (("--csv", str(self.csv), "--lesson-bin", "/bin/echo", "--presets", "cov-toy"),
             "no presets"),
            (("--csv", str(self.dir), "--lesson-bin", str(self.lesson), "--presets",
              "cov-toy"), "is a directory"),
            (("--csv", str(self.dir / "no" / "b.csv"), "--lesson-bin", str(self.lesson),
              "--presets", "cov-toy"), "does not exist"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.run_script(*args)
                self.assertEqual(rc, 2, out + err)
                self.assertIn(message, err)
        self.assert_untouched(before)

    def test_csv_of_another_schema_exits_2(self):
        self.csv.write_text("lesson,variant\n")
        before = self.csv.read_bytes()
        rc, _, err = self.run_script(*self.good_args())
        self.assertEqual(rc, 2)
        self.assertIn("CSV_HEADER", err)
        self.assert_untouched(before)


def op_slow(s, layout, mu, gamma, c, out):
    """The seed's op_slow loop for loop (covariance.c cov_op_slow) in float64 on Python
    lists from the script's tensors, into a copy of `out` as a flat list."""
    ho, wo, p_count, q_count = pc.positions(s)
    full = layout == pc.FULL
    mu_l = mu.double().flatten().tolist()
    g_l = gamma.double().flatten().tolist()
    o_l = out.double().flatten().tolist()
    c_l = c.double().tolist()

    def g_at(b, ci, p, p2):
        if full:
            return g_l[(((b * s.cin + ci) * p_count + p) * s.cin + ci) * p_count + p2]
        return g_l[((b * s.cin + ci) * p_count + p) * p_count + p2]

    def o_at(b, c0, q, q2):
        if full:
            return (((b * s.cout + c0) * q_count + q) * s.cout + c0) * q_count + q2
        return ((b * s.cout + c0) * q_count + q) * q_count + q2

    k = s.ksize
    for b in range(s.n):
        for q in range(q_count):
            i0, j0 = divmod(q, wo)
            for q2 in range(q_count):
                i1, j1 = divmod(q2, wo)
                total = 0.0
                for ci in range(s.cin):
                    for di in range(k):
                        for dj in range(k):
                            p = (i0 + di) * s.w + j0 + dj
                            p2 = (i1 + di) * s.w + j1 + dj
                            base = (b * s.cin + ci) * p_count
                            total += mu_l[base + p] * mu_l[base + p2] + g_at(b, ci, p, p2)
                for c0 in range(s.cout):
                    o_l[o_at(b, c0, q, q2)] += c_l[c0] * total
    return o_l


@unittest.skipIf(torch is None, "PyTorch is not installed: its CPU runs these")
class TorchCpuTest(unittest.TestCase):
    """The script's op, draws, gold and check on PyTorch's CPU."""
    # Odd and even windows, h != w, k = 1, and k = h = w (one output position).
    DIMS = ((2, 3, 2, 5, 4, 2), (1, 2, 3, 4, 6, 3), (2, 1, 1, 3, 3, 1), (1, 2, 2, 3, 3, 3))

    def setUp(self):
        torch.set_float32_matmul_precision("highest")
        self.SHAPES = [shape(*d) for d in self.DIMS]

    def drawn(self, s, layout, seed=7):
        gen = torch.Generator(device="cpu")
        gen.manual_seed(seed)
        return pc.draw(torch, s, layout, gen, "cpu")

    def test_draws(self):
        s = self.SHAPES[0]
        _, _, p, q = pc.positions(s)
        mu, gd, c, ob = self.drawn(s, pc.BLOCKS)
        self.assertEqual(tuple(gd.shape), (s.n, s.cin, p, p))
        self.assertEqual(tuple(ob.shape), (s.n, s.cout, q, q))
        self.assertTrue(torch.equal(gd, gd.transpose(-1, -2)))
        for t, lo in ((mu, -1), (gd, -1), (c, 0), (ob, -1)):
            self.assertGreaterEqual(float(t.min()), lo)
            self.assertLess(float(t.max()), 1)
        mu2, gamma, c2, out = self.drawn(s, pc.FULL)
        self.assertEqual(tuple(gamma.shape), (s.n, s.cin, p, s.cin, p))
        self.assertEqual(tuple(out.shape), (s.n, s.cout, q, s.cout, q))
        # The same draws in both layouts, NaN off the diagonal blocks.
        self.assertTrue(torch.equal(mu, mu2) and torch.equal(c, c2))
        self.assertTrue(torch.equal(gamma.diagonal(dim1=1, dim2=3), gd.permute(0, 2, 3, 1)))
        self.assertTrue(torch.equal(out.diagonal(dim1=1, dim2=3), ob.permute(0, 2, 3, 1)))
        self.assertEqual(int(torch.isnan(gamma).sum()), s.n * s.cin * (s.cin - 1) * p * p)
        self.assertEqual(int(torch.isnan(out).sum()), s.n * s.cout * (s.cout - 1) * q * q)

    def test_op_against_the_loops(self):
        for s in self.SHAPES:
            for layout in pc.LAYOUTS:
                with self.subTest(shape=s, layout=layout):
                    mu, gamma, c, out = self.drawn(s, layout)
                    want = op_slow(s, layout, mu, gamma, c, out)
                    pc.run_op(torch, s, layout, mu, gamma, c, out)
                    got = out.double().flatten().tolist()
                    for i, (a, b) in enumerate(zip(got, want)):
                        if math.isnan(b):
                            self.assertTrue(math.isnan(a), i)   # off-diagonal: untouched
                        else:
                            self.assertLessEqual(abs(a - b), 1e-5 * (1 + abs(b)), i)

    def test_gold_and_check(self):
        for s in self.SHAPES:
            for layout in pc.LAYOUTS:
                with self.subTest(shape=s, layout=layout):
                    mu, gamma, c, out = self.drawn(s, layout)
                    ref, mag, why = pc.gold(torch, s, layout, mu, gamma, c, out, seed=1)
                    self.assertIsNone(why)
                    # The gold against the loops, in float64.
                    want = op_slow(s, layout, mu, gamma, c, out)
                    blocks = pc.out_blocks(out, layout).clone()
                    pc.out_blocks(out, layout).copy_(ref)   # the gold into place, rounded
                    for a, b in zip(out.double().flatten().tolist(), want):
                        self.assertTrue(math.isnan(a) and math.isnan(b)
                                        or abs(a - b) <= 1e-6 * (1 + abs(b)))
                    pc.out_blocks(out, layout).copy_(blocks)
                    pc.run_op(torch, s, layout, mu, gamma, c, out)
                    result = pc.check(torch, s, layout, out, ref, mag)
                    self.assertTrue(result.passed, result)
                    self.assertLess(result.rel_err, 1e-6)
                    _, _, _, q = pc.positions(s)
                    self.assertEqual(result.checked, s.n * s.cout * s.cout * q * q
                                     if layout == pc.FULL else s.n * s.cout * q * q)

    def test_check_fails(self):
        s = self.SHAPES[1]
        _, _, _, q = pc.positions(s)
        for layout in pc.LAYOUTS:
            def after_run(change):
                mu, gamma, c, out = self.drawn(s, layout)
                ref, mag, _ = pc.gold(torch, s, layout, mu, gamma, c, out, seed=1)
                pc.run_op(torch, s, layout, mu, gamma, c, out)
                change(out)
                return pc.check(torch, s, layout, out, ref, mag)

            with self.subTest(layout=layout, change="one output off"):
                def nudge(out):
                    pc.out_blocks(out, layout)[0, 1, 2, 0] += 1e-3
                r = after_run(nudge)
                self.assertFalse(r.passed)
                self.assertEqual(r.failures, 1)
            with self.subTest(layout=layout, change="NaN output"):
                def spoil(out):
                    pc.out_blocks(out, layout)[0, 0, 0, 0] = float("nan")
                r = after_run(spoil)
                self.assertFalse(r.passed)
                self.assertEqual(r.max_abs, math.inf)
            with self.subTest(layout=layout, change="not run"):
                mu, gamma, c, out = self.drawn(s, layout)
                ref, mag, _ = pc.gold(torch, s, layout, mu, gamma, c, out, seed=1)
                self.assertFalse(pc.check(torch, s, layout, out, ref, mag).passed)
        with self.subTest(change="off-diagonal write"):
            mu, gamma, c, out = self.drawn(s, pc.FULL)
            ref, mag, _ = pc.gold(torch, s, pc.FULL, mu, gamma, c, out, seed=1)
            pc.run_op(torch, s, pc.FULL, mu, gamma, c, out)
            out[0, 0, 0, 1, 0] = 0.0
            r = pc.check(torch, s, pc.FULL, out, ref, mag)
            self.assertFalse(r.passed)
            self.assertEqual(r.failures, 1)
            self.assertIn("outside the diagonal blocks", r.why)

    def test_gold_catches_a_wrong_formula(self):
        s = self.SHAPES[1]
        mu, gamma, c, out = self.drawn(s, pc.BLOCKS)
        right = pc.window_sum
        try:
            # A window shifted along j: the spot checks term by term must notice.
            pc.window_sum = lambda t, m, g, k: right(t, m.flip(-1), g, k)
            _, _, why = pc.gold(torch, s, pc.BLOCKS, mu, gamma, c, out, seed=1)
        finally:
            pc.window_sum = right
        self.assertIn("float64 gold is wrong", why)

    def test_direct_sum(self):
        s = self.SHAPES[0]
        for layout in pc.LAYOUTS:
            mu, gamma, c, out = self.drawn(s, layout)
            blocks, dim = pc.gamma_blocks(gamma, layout)
            total = pc.window_sum(torch, mu.double(), blocks.double().sum(dim), s.ksize)
            _, _, _, q = pc.positions(s)
            for b, i, j in ((0, 0, 0), (1, q - 1, 2), (1, 3, q - 1)):
                got, mag = pc.direct_sum(torch, s, layout, mu, gamma, b, i, j)
                self.assertAlmostEqual(got, float(total[b, i, j]), delta=1e-12 * mag)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].endswith(".py"):
        pc = load(Path(sys.argv.pop(1)).resolve())
    unittest.main(verbosity=2)
