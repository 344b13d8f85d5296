#!/usr/bin/env python3
"""Checks the relative links of the docs: every [text](target) and ![alt](target) in
docs/*.md and README.md whose target is not a URL names a file that exists (relative to
the page), and, with a #fragment, a heading of that page (or of the page itself, for a
bare #fragment) as GitHub makes its anchor, or an <a id="..."> or <a name="...">.

    python3 tests/check_links.py [REPO_ROOT]

Prints one line per broken link (file:line, the link, what is missing) and exits 1 if
there is any, 0 otherwise. Links inside ``` blocks and `code spans` are not links.
Standard library only.
"""
import re
import sys
from pathlib import Path

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()\s]*\)[^()\s]*)*)\)")
CODE_SPAN = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped (letters,
    digits, spaces, hyphens and underscores kept), spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").replace("*", "")
    text = "".join(c for c in text.lower() if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


ANCHORS = {}  # path -> its anchors, read once


def anchors(path):
    """The anchors of a Markdown file: its headings' slugs (a repeated one gets -1, -2,
    ... as GitHub numbers them) and its HTML anchors."""
    cache = ANCHORS
    if path not in cache:
        found, seen, in_code = set(), {}, False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue
            found.update(HTML_ANCHOR.findall(line))
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def check_page(page, report):
    """Reports each broken link of page; returns how many links it read."""
    in_code, links = False, 0
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            links += 1
            name, _, fragment = target.partition("#")
            path = (page.parent / name).resolve() if name else page
            where = f"{page.name}:{number}: ({target})"
            if not path.exists():
                report(f"{where}: no such file {name}")
            elif fragment and path.suffix == ".md" and fragment not in anchors(path):
                report(f"{where}: {path.name} has no heading or anchor #{fragment}")
    return links


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    pages = sorted(root.glob("docs/*.md")) + sorted(root.glob("README.md"))
    problems, links = [], 0
    for page in pages:
        links += check_page(page, problems.append)
    for line in problems:
        print(line)
    print(f"{links} links of {len(pages)} pages checked: {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
