#!/usr/bin/env python3
"""Tests tests/check_code_on_page.py on a page and a source of its own: a page whose
blocks equal their snippets passes, and each change below, one at a time, makes it fail
with the line it must print (or pass, where the change is allowed); --fix repairs the
page and leaves the source alone.

    python3 tests/test_check_code_on_page.py [CHECK_CODE_ON_PAGE_PY]

Standard library only.
"""
import tempfile
from pathlib import Path

from check_selftest import CheckTest, main

SOURCE = """\
/* A kernel with three snippets: its index lines (inside the body), the whole kernel,
 * and a launcher marked with // comments. */
/* [page: kernel] */
__global__ void scale(float *out, const float *in, int n)
{
    /* [page: index] */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    /* [/page: index] */
    if (i < n)
        out[i] = 2.0f * in[i];
}
/* [/page: kernel] */

// [page: launch]
void launch_scale(float *out, const float *in, int n)
{
    scale<<<(n + 255) / 256, 256>>>(out, in, n);
}
// [/page: launch]
"""

PAGE = """\
# A lesson

The index, dedented:

<!-- code: lessons/x/scale.cu#index -->
```cuda
const int i = blockIdx.x * blockDim.x + threadIdx.x;
```

- The kernel, in a list item, without the marker lines of `index`:

  <!-- code: lessons/x/scale.cu#kernel -->
  ```cuda
  __global__ void scale(float *out, const float *in, int n)
  {
      const int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n)
          out[i] = 2.0f * in[i];
  }
  ```

The launcher:

<!-- code: lessons/x/scale.cu#launch -->
```c
void launch_scale(float *out, const float *in, int n)
{
    scale<<<(n + 255) / 256, 256>>>(out, in, n);
}
```

A comment quoted in a block is no comment:

```
<!-- code: lessons/x/none.cu#nothing -->
```
"""


# Changes that make the check fail: (what, the text changed ("page" or "source"), the old
# text, the new, the lines the check prints).
FAILING = [
    ("an edited page line", "page", "          out[i] = 2.0f", "          out[i] = 3.0f",
     ["docs/02_x.md:12: the block differs from lessons/x/scale.cu#kernel "
      "(lessons/x/scale.cu:4-11)",
      "    -        out[i] = 3.0f * in[i];",
      "    +        out[i] = 2.0f * in[i];"]),
    ("an edited source line", "source", "(n + 255) / 256, 256", "(n + 127) / 128, 128",
     ["docs/02_x.md:24: the block differs from lessons/x/scale.cu#launch",
      "    +    scale<<<(n + 127) / 128, 128>>>(out, in, n);"]),
    ("a changed indentation", "page", "```cuda\nconst int i", "```cuda\n    const int i",
     ["docs/02_x.md:5: the block differs"]),
    ("a missing snippet", "page", "scale.cu#launch", "scale.cu#launcher",
     ["docs/02_x.md:24: lessons/x/scale.cu marks no snippet launcher "
      "(it marks: index, kernel, launch)"]),
    ("a missing file", "page", "lessons/x/scale.cu#launch", "lessons/x/scale2.cu#launch",
     ["docs/02_x.md:24: no file lessons/x/scale2.cu in the repository"]),
    ("a path outside the repository", "page", "lessons/x/scale.cu#launch", "../scale.cu#launch",
     ["docs/02_x.md:24: no file ../scale.cu in the repository"]),
    ("a snippet name marked twice", "source", "// [/page: launch]\n",
     "// [/page: launch]\n/* [page: launch] */\nint again;\n/* [/page: launch] */\n",
     ["lessons/x/scale.cu:20: snippet launch is marked twice (first at line 14)",
      "docs/02_x.md:24: lessons/x/scale.cu#launch: the markers of launch "
      "in lessons/x/scale.cu are broken"]),
    ("a missing closing marker", "source", "// [/page: launch]\n", "",
     ["lessons/x/scale.cu:14: [page: launch] has no [/page: launch] after it"]),
    ("a closing marker without an opening one", "source", "// [page: launch]\n", "",
     ["lessons/x/scale.cu:18: [/page: launch] closes no [page: launch] above it"]),
    ("a malformed marker", "source", "/* [/page: index] */", "/* [/page index] */",
     ["lessons/x/scale.cu:8: looks like a page marker but is not",
      "lessons/x/scale.cu:6: [page: index] has no [/page: index]"]),
    ("a code comment without its block", "page", "<!-- code: lessons/x/scale.cu#index -->\n",
     "<!-- code: lessons/x/scale.cu#index -->\n\n",
     ["docs/02_x.md:5: code comment lessons/x/scale.cu#index has no ``` block on the next "
      "line"]),
    ("a code comment without a name", "page", "scale.cu#index", "scale.cu",
     ["docs/02_x.md:5: code comment names 'lessons/x/scale.cu': write PATH#NAME"]),
]


class CheckCodeOnPage(CheckTest):
    def run_check(self, page=PAGE, source=SOURCE, *flags):
        """Runs the check on a repository of page and source; returns the exit code,
        the output, and the page and source after the run."""
        with tempfile.TemporaryDirectory() as root:
            (Path(root) / "lessons" / "x").mkdir(parents=True)
            src = Path(root) / "lessons" / "x" / "scale.cu"
            src.write_text(source)
            (Path(root) / "docs").mkdir()
            doc = Path(root) / "docs" / "02_x.md"
            doc.write_text(page)
            rc, out = self.run_script(root, *flags)
            return rc, out, doc.read_text(), src.read_text()

    def test_equal_passes(self):
        rc, out, _, _ = self.run_check(PAGE, SOURCE, "--verbose")
        self.assertEqual(rc, 0, out)
        self.assertIn("3 code blocks compared with their source: 0 problems", out)
        self.assertIn("docs/02_x.md:24: lessons/x/scale.cu#launch: 4 lines equal to "
                      "lessons/x/scale.cu:15-18", out)

    def test_changes_fail(self):
        for what, changed, old, new, messages in FAILING:
            with self.subTest(what):
                texts = {"page": PAGE, "source": SOURCE}
                texts[changed] = self.changed(texts[changed], old, new)
                rc, out, _, _ = self.run_check(**texts)
                self.assertEqual(rc, 1, out)
                for message in messages:
                    self.assertIn(message, out)

    def test_unquoted_snippet_is_listed_not_failed(self):
        page = self.changed(PAGE, "The index, dedented:\n\n<!-- code: lessons/x/scale.cu#index "
                            "-->\n```cuda\nconst int i = blockIdx.x * blockDim.x + threadIdx.x;"
                            "\n```\n", "")
        rc, out, _, _ = self.run_check(page, SOURCE, "--verbose")
        self.assertEqual(rc, 0, out)
        self.assertIn("lessons/x/scale.cu:6: snippet index is on no page", out)
        rc, out, _, _ = self.run_check(page, SOURCE)
        self.assertNotIn("on no page", out)

    def test_python_source_with_hash_markers(self):
        """python/*.py snippets are marked with `#`; a page quoting one passes, and fails
        once the source changes."""
        source = "def f(x):\n    # [page: body]\n    return 2 * x\n    # [/page: body]\n"
        page = ("<!-- code: python/pkg/f.py#body -->\n```python\nreturn 2 * x\n```\n")
        for text, rc_wanted in ((source, 0), (source.replace("2 * x", "3 * x"), 1)):
            with tempfile.TemporaryDirectory() as root:
                (Path(root) / "python" / "pkg").mkdir(parents=True)
                (Path(root) / "python" / "pkg" / "f.py").write_text(text)
                (Path(root) / "docs").mkdir()
                (Path(root) / "docs" / "13_x.md").write_text(page)
                rc, out = self.run_script(root)
                self.assertEqual(rc, rc_wanted, out)

    def test_fix_repairs_the_page(self):
        page = self.changed(PAGE, "          out[i] = 2.0f", "          out[i] = 3.0f")
        page = self.changed(page, "```cuda\nconst int i = blockIdx.x * blockDim.x + threadIdx.x;",
                            "```cuda\nint i = threadIdx.x;\nint unused;")
        rc, out, fixed, source = self.run_check(page, SOURCE, "--fix")
        self.assertEqual(rc, 0, out)
        self.assertIn("fixed docs/02_x.md:5: block from lessons/x/scale.cu#index", out)
        self.assertIn("fixed docs/02_x.md:13: block from lessons/x/scale.cu#kernel", out)
        self.assertEqual(fixed, PAGE)
        self.assertEqual(source, SOURCE)

    def test_fix_leaves_what_it_cannot_rewrite(self):
        page = self.changed(PAGE, "scale.cu#launch", "scale.cu#launcher")
        rc, out, fixed, _ = self.run_check(page, SOURCE, "--fix")
        self.assertEqual(rc, 1, out)
        self.assertIn("marks no snippet launcher", out)
        self.assertEqual(fixed, page)

    def test_bad_command_line_is_usage(self):
        rc, out, _, _ = self.run_check(PAGE, SOURCE, "--fxi")
        self.assertEqual(rc, 2, out)
        self.assertIn("usage:", out)


if __name__ == "__main__":
    main("check_code_on_page.py")
