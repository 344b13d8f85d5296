#!/usr/bin/env python3
"""Tests tests/check_links.py on pages of its own: pages whose every link resolves pass,
and each change below, one at a time, makes them fail with the line it must print (or
pass, where the change is allowed).

    python3 tests/test_check_links.py [CHECK_LINKS_PY]

Standard library only.
"""

from check_selftest import CheckTest, main

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


# Changes that break a link: (what, the page's old text, the new, a line the check prints).
BROKEN = [
    ("a missing file", "(../results/notes.md)", "(../results/note.md)",
     "08_tensor_cores.md:6: (../results/note.md): no such file"),
    ("a missing image", "(img/08_ladder.png)", "(img/09_ladder.png)", "no such file"),
    ("a missing anchor in another page", "answers.md#lesson-08", "answers.md#lesson-09",
     "answers.md has no heading or anchor #lesson-09"),
    ("a missing anchor in the page", "(#step-5-wgmma_fp16_cp_async-the-warpgroup-mma)",
     "(#step-5)", "08_tensor_cores.md has no heading or anchor #step-5"),
    ("a repeated heading is numbered once", "(#run-it-1)", "(#run-it-2)",
     "no heading or anchor #run-it-2"),
    ("code that becomes a link", "`[not a link](missing.md)`", "[a link](missing.md)",
     "no such file missing.md"),
]


class CheckLinks(CheckTest):
    def run_check(self, page):
        return self.run_on_files({"docs/img/08_ladder.png": b"png", "docs/answers.md": ANSWERS,
                                  "results/notes.md": "# Notes\n",
                                  "docs/08_tensor_cores.md": page})

    def test_page_passes(self):
        rc, out = self.run_check(PAGE)
        self.assertEqual(rc, 0, out)
        self.assertIn("5 links of 2 pages checked: 0 broken", out)

    def test_broken_links_fail(self):
        for what, old, new, message in BROKEN:
            with self.subTest(what):
                rc, out = self.run_check(self.changed(PAGE, old, new))
                self.assertEqual(rc, 1, out)
                self.assertIn(message, out)

    def test_heading_anchor_of_another_page(self):
        rc, out = self.run_check(self.changed(PAGE, "answers.md#lesson-08",
                                              "answers.md#lesson-08-answers"))
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    main("check_links.py")
