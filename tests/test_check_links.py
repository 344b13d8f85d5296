#!/usr/bin/env python3
"""Tests tests/check_links.py on pages of its own: pages whose every link resolves pass,
and each change below, one at a time, makes them fail with the line it must print (or
pass, where the change is allowed).

    python3 tests/test_check_links.py [CHECK_LINKS_PY]

Standard library only.
"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().with_name("check_links.py")

PAGE = """\
# 08 · Tensor cores

## The ladder at a glance (NVIDIA H200)

![the ladder](img/08_ladder.png), [the answers](answers.md#lesson-08),
[step 5](#step-5-wgmma_fp16_cp_async-the-warpgroup-mma), [the notes](../results/notes.md),
[the second Run it](#run-it-1) and [the CUDA guide](https://docs.nvidia.com/cuda/).

### Step 5, `wgmma_fp16_cp_async`: the warpgroup MMA

## Run it

## Run it

`[not a link](missing.md)` in a code span.

```
[nor in a block](missing.md)
```
"""

ANSWERS = """\
# Answers

<a id="lesson-08"></a>
## Lesson 08 answers
"""


class CheckLinks(unittest.TestCase):
    def run_check(self, page):
        with tempfile.TemporaryDirectory() as root:
            (Path(root) / "docs" / "img").mkdir(parents=True)
            (Path(root) / "docs" / "img" / "08_ladder.png").write_bytes(b"png")
            (Path(root) / "docs" / "answers.md").write_text(ANSWERS)
            (Path(root) / "results").mkdir()
            (Path(root) / "results" / "notes.md").write_text("# Notes\n")
            (Path(root) / "docs" / "08_tensor_cores.md").write_text(page)
            done = subprocess.run([sys.executable, str(SCRIPT), root], capture_output=True,
                                  text=True)
            return done.returncode, done.stdout + done.stderr

    def changed(self, old, new):
        self.assertEqual(PAGE.count(old), 1, old)
        return PAGE.replace(old, new)

    def assert_fails(self, old, new, message):
        rc, out = self.run_check(self.changed(old, new))
        self.assertEqual(rc, 1, out)
        self.assertIn(message, out)

    def test_page_passes(self):
        rc, out = self.run_check(PAGE)
        self.assertEqual(rc, 0, out)
        self.assertIn("5 links of 2 pages checked: 0 broken", out)

    def test_missing_file(self):
        self.assert_fails("(../results/notes.md)", "(../results/note.md)",
                          "08_tensor_cores.md:6: (../results/note.md): no such file")

    def test_missing_image(self):
        self.assert_fails("(img/08_ladder.png)", "(img/09_ladder.png)", "no such file")

    def test_missing_anchor_in_another_page(self):
        self.assert_fails("answers.md#lesson-08", "answers.md#lesson-09",
                          "answers.md has no heading or anchor #lesson-09")

    def test_missing_anchor_in_the_page(self):
        self.assert_fails("(#step-5-wgmma_fp16_cp_async-the-warpgroup-mma)", "(#step-5)",
                          "08_tensor_cores.md has no heading or anchor #step-5")

    def test_repeated_heading_numbered_once(self):
        self.assert_fails("(#run-it-1)", "(#run-it-2)", "no heading or anchor #run-it-2")

    def test_heading_anchor_of_another_page(self):
        rc, out = self.run_check(self.changed("answers.md#lesson-08",
                                              "answers.md#lesson-08-answers"))
        self.assertEqual(rc, 0, out)

    def test_code_is_not_a_link(self):
        rc, out = self.run_check(self.changed("`[not a link](missing.md)`",
                                              "[a link](missing.md)"))
        self.assertEqual(rc, 1, out)
        self.assertIn("no such file missing.md", out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].endswith(".py"):
        SCRIPT = Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=2)
