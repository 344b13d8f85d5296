#!/usr/bin/env python3
"""Tests tests/check_page_form.py on pages of its own: a lesson page of 5,000 words that
names its runs by their files passes, and each change below makes it fail with the line
it must print (or pass, where the change is allowed).

    python3 tests/test_check_page_form.py [CHECK_PAGE_FORM_PY]

Standard library only.
"""

from check_selftest import CheckTest, main

RESULTS = "Measured in `results/h200/bench_34bf365.csv` and 08_ladder/runs_34bf365/, colour #dbe8f5.\n"
FILLER = "word " * (5000 - len(RESULTS.split()) - len("# 08 · Tensor cores".split()))
PAGE = "# 08 · Tensor cores\n\n" + RESULTS + FILLER.strip() + "\n"


class CheckPageForm(CheckTest):
    def run_check(self, page, name="08_tensor_cores.md"):
        return self.run_on_files({f"docs/{name}": page, "README.md": "# The course\n"})

    def test_page_passes(self):
        rc, out = self.run_check(PAGE)
        self.assertEqual(rc, 0, out)
        self.assertIn("2 pages checked: 0 faults", out)

    def test_one_word_too_many(self):
        rc, out = self.run_check(PAGE + "more\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("docs/08_tensor_cores.md: 5001 words, more than 5000", out)

    def test_only_lesson_pages_are_counted(self):
        rc, out = self.run_check(PAGE + "more\n", name="harness.md")
        self.assertEqual(rc, 0, out)

    def test_a_commit_in_the_text(self):
        for what, old, new in (("prose", "Measured in", "Measured at 34bf365 in"),
                               ("a code span", "Measured in", "Measured at `e4ab6c0` in"),
                               ("a full hash", "Measured in",
                                "Measured at 2f2539e0123456789abcdef0123456789abcdef0 in")):
            with self.subTest(what):
                rc, out = self.run_check(self.changed(PAGE, old, new))
                self.assertEqual(rc, 1, out)
                self.assertIn("docs/08_tensor_cores.md:3: names commit", out)


if __name__ == "__main__":
    main("check_page_form.py")
