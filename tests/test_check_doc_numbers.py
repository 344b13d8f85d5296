#!/usr/bin/env python3
"""Tests tests/check_doc_numbers.py on a page and a CSV of its own: a page whose every
number matches passes, and each change below, one at a time, makes it fail with the
line it must print (or pass, where the change is allowed).

    python3 tests/test_check_doc_numbers.py [CHECK_DOC_NUMBERS_PY]

Standard library only. The rows are lesson 09's on bnn-b16c256s28 from
results/h200/bench.csv (0666ab8), the presets the check once passed over because their
names have letters after digits.
"""
import tempfile
from pathlib import Path

from check_selftest import CheckTest, main

CSV = """\
lesson,variant,preset,device,n,cin,cout,h,w,ksize,dtype,median_ms,min_ms,gbps,gflops,roofline_pct,cudnn_ms,vs_cudnn,rel_err,max_abs_err,status,commit,date,layout,params
09_binary,cudnn,bnn-b16c256s28,NVIDIA H200,16,256,256,28,28,3,fp32,0.144016,0.142912,194.77,102749.03,153.57,0.144016,1.0000,3.440e-06,6.076e-04,PASS,0666ab8,2026-11-22T20:46:03Z,nchw,algo=winograd_nonfused
09_binary,cudnn,bnn-b16c256s28,NVIDIA H200,16,256,256,28,28,3,fp16,0.052384,0.049536,267.75,282481.38,26.39,0.052384,1.0000,2.104e-04,1.562e-02,PASS,0666ab8,2026-11-22T20:46:06Z,nhwc,algo=implicit_precomp_gemm
09_binary,bmma_and,bnn-b16c256s28,NVIDIA H200,16,256,256,28,28,3,binary,0.052544,0.051168,253.52,281621.21,6.08,0.052384,0.9970,2.565e-08,3.815e-06,PASS,0666ab8,2026-11-22T20:46:07Z,bits,
"""

PAGE = """\
# Lesson 09

| preset | batch | C → K | image | GOP (2 per product) |
|---|---|---|---|---|
| `bnn-b16c256s28` | 16 | 256 → 256 | 28² | 14.8 |

## Results (NVIDIA H200)

```
lesson 09_binary | NVIDIA H200 | cc 9.0 | 132 SMs | L2 63 MB | copy 4169 GB/s
problem bnn-b16c256s28: n=16 cin=256 cout=256 28x28 ksize=3 bias | 0.028 GB min traffic at fp32, 14.798 GFLOP | seed 1
variant              format       median ms     min ms     GB/s   GFLOP/s  roofline of       vs cuDNN   rel err   max abs  check
cudnn                fp32/nchw       0.1440     0.1429    194.8  102749.0    153.6% fp32        1.00x  3.44e-06  6.08e-04  PASS
cudnn                fp16/nhwc       0.0524     0.0495    267.7  282481.4     26.4% fp16-tc     1.00x  2.10e-04  1.56e-02  PASS
bmma_and             binary/bits     0.0525     0.0512    253.5  281621.2      6.1% memory      1.00x  2.57e-08  3.81e-06  PASS
```

| variant | input | bnn-b16c256s28 | bnn-b16c256s28 vs fp32 NCHW |
|---|---|---|---|
| cuDNN fp32 NCHW | fp32 | 0.1440 | |
| cuDNN fp16 NHWC | fp16 | 0.0524 | |
| `bmma_and` | bits | 0.0525 | 2.74× |

| preset | variant | median ms | vs cuDNN | check |
|---|---|---|---|---|
| bnn-b16c256s28 | `bmma_and` | 0.0525 | 1.00x | PASS |

Prose after the tables.
"""

# Numbers the page above has checked: 27 in the console block (3 rows of 9), 4 in the
# variant table (one of them the ratio), 3 in the preset table.
CHECKED = 34

UNREAD = "table looks like measured results"
MARKER = "<!-- not from bench.csv: derived from two rows -->"

# Changes that make the page fail: (what, the page's old text, the new, the lines the
# check prints).
FAILING = [
    # The bnn presets are read like any other, in tables and in console output.
    ("a wrong number of a bnn preset", "| `bmma_and` | 0.0525 | 1.00x",
     "| `bmma_and` | 0.0552 | 1.00x",
     ["bmma_and bnn-b16c256s28 median_ms: page says 0.0552, results have 0.052544"]),
    ("a wrong number in a bnn preset's column", "| bits | 0.0525 |", "| bits | 0.0255 |",
     ["page says 0.0255"]),
    ("a wrong console number of a bnn preset", "0.0512    253.5", "0.0521    253.5",
     ["min_ms: page says 0.0521"]),
    # A cuDNN row or column that names its format is compared with that format's row only.
    ("cuDNN's format is kept apart", "| cuDNN fp32 NCHW | fp32 | 0.1440 |",
     "| cuDNN fp32 NCHW | fp32 | 0.0524 |",
     ["cudnn fp32/nchw bnn-b16c256s28 median_ms: page says 0.0524"]),
    ("a wrong ratio", "2.74×", "2.47×", ["page says 2.47×"]),
    # A table or block that looks like results but is not read fails, unless marked.
    ("an unread table", "| variant | input |", "| kernel | input |", [UNREAD]),
    ("a table without a GPU", "| variant | input |",
     "## Another GPU\n\n| variant | input |",
     ["09_binary.md:20: table looks like measured results, but its section names no GPU "
      "of results/"]),
    ("a row of an unknown preset", "| bnn-b16c256s28 | `bmma_and` |",
     "| bnn-b16c256s29 | `bmma_and` |",
     ["row not matched to results (problem 'bnn-b16c256s29'"]),
    ("a row of an unknown variant", "| `bmma_and` | bits |", "| `bmma_or` | bits |",
     ["row not matched to results (variant 'bmma_or'"]),
    ("a console block of an unknown GPU", "lesson 09_binary | NVIDIA H200 |",
     "lesson 09_binary | NVIDIA H100 |",
     ["console header names no GPU of results/",
      "console block looks like the harness's output"]),
    ("a console row of an unknown variant", "bmma_and             binary",
     "bmma_or              binary", ["console row of a variant"]),
    # Markers: only above a table or block the rules cannot read, and with a reason.
    ("a marker on a checkable table", "| preset | variant |", f"{MARKER}\n| preset | variant |",
     ["3 of its numbers are read from results/*/bench.csv: remove the marker"]),
    ("a marker without a reason", "| variant | input |",
     "<!-- not from bench.csv -->\n| kernel | input |", ["marker says not why"]),
    ("a marker above prose", "Prose after the tables.",
     f"{MARKER}\nProse after the tables.", ["is not right above a table"]),
    ("a `printed by` marker above prose", "Prose after the tables.",
     "<!-- printed by: results/h200/run.log -->\nProse after the tables.",
     ["`printed by` marker is not right above a ``` block"]),
]


class CheckDocNumbers(CheckTest):
    def run_check(self, page, *flags, files=None):
        with tempfile.TemporaryDirectory() as root:
            (Path(root) / "results" / "h200").mkdir(parents=True)
            (Path(root) / "results" / "h200" / "bench.csv").write_text(CSV)
            for name, text in (files or {}).items():
                (Path(root) / name).write_text(text)
            (Path(root) / "docs").mkdir()
            doc = Path(root) / "docs" / "09_binary.md"
            doc.write_text(page)
            rc, out = self.run_script(root, *flags)
            return rc, out, doc.read_text()

    def assert_fails(self, page, *messages, files=None):
        """The page fails, the check printing each of messages."""
        rc, out, _ = self.run_check(page, files=files)
        self.assertEqual(rc, 1, out)
        for message in messages:
            self.assertIn(message, out)

    def test_page_passes(self):
        rc, out, _ = self.run_check(PAGE, "--verbose")
        self.assertEqual(rc, 0, out)
        self.assertIn(f"{CHECKED} numbers checked", out)
        self.assertIn("0 mismatches", out)

    def test_changes_fail(self):
        for what, old, new, messages in FAILING:
            with self.subTest(what):
                self.assert_fails(self.changed(PAGE, old, new), *messages)

    def test_fix_rewrites_a_bnn_number(self):
        rc, out, fixed = self.run_check(self.changed(PAGE, "| `bmma_and` | 0.0525 | 1.00x",
                                                     "| `bmma_and` | 0.0552 | 1.00x"), "--fix")
        self.assertEqual(rc, 0, out)
        self.assertEqual(fixed, PAGE)

    def test_unread_table_marked_passes(self):
        page = self.changed(PAGE, "| variant | input |", f"{MARKER}\n\n| kernel | input |")
        rc, out, _ = self.run_check(page, "--verbose")
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped 09_binary.md:", out)
        self.assertIn(f"{CHECKED - 4} numbers checked", out)

    def test_marker_quoted_in_prose_is_no_marker(self):
        page = self.changed(PAGE, "Prose after the tables.",
                            f"Prose naming `{MARKER}` after the tables.")
        rc, out, _ = self.run_check(page)
        self.assertEqual(rc, 0, out)
        self.assert_fails(self.changed(PAGE, "| variant | input |",
                                       f"Prose naming `{MARKER}`.\n\n| kernel | input |"),
                          UNREAD)

    # A block quoting one run's console output is checked against that run's log.
    def printed_page(self, block, log="results/h200/run.log"):
        return self.changed(PAGE, "Prose after the tables.",
                            f"<!-- printed by: {log} -->\n\n```\n{block}\n```\n\nProse.")

    def test_printed_block_passes(self):
        page = self.printed_page(RUN_LOG.splitlines()[0] + "\n" + RUN_LOG.splitlines()[2])
        rc, out, _ = self.run_check(page, "--verbose", files={"results/h200/run.log": RUN_LOG})
        self.assertEqual(rc, 0, out)
        self.assertIn("2 lines of results/h200/run.log", out)
        self.assertIn(f"{CHECKED} numbers checked", out)  # and none of the block's

    def test_printed_block_with_a_line_the_log_lacks_fails(self):
        page = self.printed_page(RUN_LOG.splitlines()[2].replace("0.0611", "0.0610"))
        self.assert_fails(page, "not a line results/h200/run.log printed",
                          files={"results/h200/run.log": RUN_LOG})

    def test_printed_block_out_of_order_fails(self):
        lines = RUN_LOG.splitlines()
        page = self.printed_page(lines[2] + "\n" + lines[0])
        self.assert_fails(page, "not a line results/h200/run.log printed",
                          files={"results/h200/run.log": RUN_LOG})

    def test_printed_block_in_the_readme_names_its_log_from_the_root(self):
        readme = ("<!-- printed by: results/h200/run.log -->\n\n```\n"
                  + RUN_LOG.splitlines()[2] + "\n```\n")
        rc, out, _ = self.run_check(PAGE, "--verbose", files={"results/h200/run.log": RUN_LOG,
                                                               "README.md": readme})
        self.assertEqual(rc, 0, out)
        self.assertIn("printed README.md:", out)

    def test_printed_by_a_missing_log_fails(self):
        self.assert_fails(self.printed_page("anything"),
                          "printed by results/h200/run.log: no such file")


# One run's console output, its numbers in no row of CSV.
RUN_LOG = """\
lesson 09_binary | NVIDIA H200 | cc 9.0 | 132 SMs | L2 63 MB | copy 4169 GB/s
variant              format       median ms     min ms     GB/s   GFLOP/s  roofline of       vs cuDNN   rel err   max abs  check
bmma_and             binary/bits     0.0611     0.0600    218.0  242187.5      5.2% memory      0.86x  2.57e-08  3.81e-06  PASS
"""


if __name__ == "__main__":
    main("check_doc_numbers.py")
