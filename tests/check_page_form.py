#!/usr/bin/env python3
"""Checks two rules of the course's page form (DESIGN.md's Docs) that can be counted:
a lesson page (docs/NN_*.md) has at most 5,000 words, counted as `wc -w` counts them
(code on the page included), and no page of docs/ nor README.md names a commit in its
text: a run is named by its results file (`bench_34bf365.csv` is a file's name and
passes; "measured at 34bf365" does not). A commit is a word of 7 to 40 hexadecimal
digits with at least one digit and one letter, not part of a path, a file name or a
longer word.

    python3 tests/check_page_form.py [REPO_ROOT]

Prints one line per fault (file:line for a commit, the file and its count for a page
too long) and exits 1 if there is any, 0 otherwise. Standard library only.
"""
import re
import sys
from pathlib import Path

MAX_WORDS = 5000
LESSON_PAGE = re.compile(r"\d\d_.*\.md$")
COMMIT = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w.-])")


def faults(root):
    pages = sorted((root / "docs").glob("*.md")) + [root / "README.md"]
    found = []
    for page in pages:
        if not page.is_file():
            continue
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(root)
        words = len(text.split())
        if LESSON_PAGE.match(page.name) and page.parent.name == "docs" and words > MAX_WORDS:
            found.append(f"{name}: {words} words, more than {MAX_WORDS}")
        for number, line in enumerate(text.splitlines(), 1):
            for commit in COMMIT.findall(line):
                found.append(f"{name}:{number}: names commit {commit}: name the results "
                             "file instead")
    return found, len(pages)


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    if not (root / "docs").is_dir():
        print(f"check_page_form.py: {root / 'docs'}: no such folder", file=sys.stderr)
        return 2
    found, count = faults(root)
    for line in found:
        print(line)
    print(f"{count} pages checked: {len(found)} faults")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
