#!/usr/bin/env python3
"""Checks that the kernel code quoted on the pages equals the source it is quoted from.

    python3 tests/check_code_on_page.py [--verbose] [--fix] [REPO_ROOT]

Prints one line per problem (file:line and what is wrong; a block that differs from its
source is followed by a short diff, `-` the page, `+` the source), then a summary, and
exits 1 if there is any problem, 0 otherwise, 2 on a bad command line. --verbose also
lists every block it compared and every snippet of the sources that no page quotes (not
an error: a snippet may wait for its page). Standard library only.

--fix rewrites each block that differs from its source, on the page, from the source
(never the other way round); it prints one line per rewrite and exits 1 if a problem is
left that it cannot rewrite (a missing file or snippet, broken markers, no block).

Code on the page
----------------
A page shows the lines of a kernel that carry its idea; they are cut from the source
between two marker comments, each on a line of its own, and the page's copy is compared
with them, so the page cannot drift from the code.

In the source (.c, .h, .cu, .cuh under lessons/ and common/, .py under python/), around
the lines:

    /* [page: naive-kernel] */
    ... the lines the page shows ...
    /* [/page: naive-kernel] */

`// [page: NAME]` and `// [/page: NAME]` work too, and in Python `# [page: NAME]` and
`# [/page: NAME]`. A NAME is letters, digits, `_`, `-`
and `.`, and is marked once per file. Snippets may nest or overlap; marker lines of other
snippets inside one are left out of it. The markers are comments only: the compiled code
is the same with or without them (only `__LINE__` moves).

On the page (docs/*.md, README.md), a comment naming the file (from the repository root)
and the snippet, on the line right above a fenced block that holds the lines:

    <!-- code: lessons/02_gpu_naive/1_naive.cu#naive-kernel -->
    ```cuda
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    ...
    ```

Indentation: the snippet is compared without the leading whitespace all its non-blank
lines share (a body cut from inside a function starts at the left margin), and the
block without its fence's own indentation (a block inside a list item is indented with
its fence). Otherwise the lines must be equal, blank lines and trailing spaces included.
A comment quoted inside a ``` block or in the middle of a line is no comment.

What it checks
--------------
* every code comment of the pages names an existing file under the repository and a
  snippet that file marks exactly once, and a fenced block follows on the next line;
* the block's lines equal the snippet's (as above);
* the markers of every source under lessons/ and common/, and of every file a page
  names: each [page: NAME] is closed by a [/page: NAME] later in the file, each close
  has its open, no NAME is marked twice, no snippet is empty, and no comment looks like
  a marker but is not one (`/* [page naive] */`).

tests/test_check_code_on_page.py runs this script on small pages and sources of its own
and checks that each rule above reports what it should.
"""
import difflib
import re
import sys
from pathlib import Path

USAGE = "usage: check_code_on_page.py [--verbose] [--fix] [REPO_ROOT]"
SOURCE_SUFFIXES = {".c", ".h", ".cu", ".cuh", ".py"}
SOURCE_DIRS = ("lessons", "common", "python")
NAME = r"[A-Za-z0-9_.-]+"
# A marker line: `/* [page: NAME] */`, `/* [/page: NAME] */` or the same after `//`, or
# in Python after `#`.
MARKER = re.compile(rf"\s*(?:/\*\s*\[(/?)page:\s*({NAME})\s*\]\s*\*/|(?://|#)\s*\[(/?)page:\s*"
                    rf"({NAME})\s*\])\s*$")
LOOKS_LIKE_MARKER = re.compile(r"(?://|/\*|#).*\[\s*/?\s*page\b")
# A page's code comment, on a line of its own: `<!-- code: PATH#NAME -->`.
COMMENT = re.compile(r"\s*<!--\s*code:\s*(\S*?)\s*-->\s*$")
LOOKS_LIKE_COMMENT = re.compile(r"\s*<!--\s*code\b")
FENCE = re.compile(r"( *)(`{3,}|~{3,})(.*)$")
DIFF_LINES = 12


class Snippet:
    def __init__(self, name, first):
        self.name = name
        self.first = first  # line number of the open marker
        self.last = None  # line number of the close marker
        self.lines = []
        self.quoted = False

    def text(self):
        """The lines without the leading whitespace all non-blank lines share."""
        indents = [re.match(r"[ \t]*", s).group() for s in self.lines if s.strip()]
        cut = len(_common_prefix(indents)) if indents else 0
        return [s[cut:] if s.strip() else "" for s in self.lines]


def _common_prefix(strings):
    first, last = min(strings), max(strings)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


class Source:
    """One source file's snippets; broken names are those whose markers are wrong."""

    def __init__(self, root, path, report):
        self.rel = path.relative_to(root).as_posix()
        self.snippets = {}
        self.broken = set()
        open_now = {}  # name -> Snippet being read
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            m = MARKER.match(line)
            if not m:
                if LOOKS_LIKE_MARKER.search(line):
                    report(f"{self.rel}:{number}: looks like a page marker but is not "
                           "`/* [page: NAME] */` or `/* [/page: NAME] */`")
                for snippet in open_now.values():
                    snippet.lines.append(line)
                continue
            closing = (m.group(1) or m.group(3)) == "/"
            name = m.group(2) or m.group(4)
            if not closing:
                if name in open_now:
                    report(f"{self.rel}:{number}: [page: {name}] again before "
                           f"[/page: {name}] (opened at line {open_now[name].first})")
                    self.broken.add(name)
                elif name in self.snippets:
                    report(f"{self.rel}:{number}: snippet {name} is marked twice "
                           f"(first at line {self.snippets[name].first})")
                    self.broken.add(name)
                else:
                    open_now[name] = Snippet(name, number)
            elif name not in open_now:
                report(f"{self.rel}:{number}: [/page: {name}] closes no [page: {name}] above it")
                self.broken.add(name)
            else:
                snippet = open_now.pop(name)
                snippet.last = number
                self.snippets[name] = snippet
                if not any(s.strip() for s in snippet.lines):
                    report(f"{self.rel}:{snippet.first}: snippet {name} is empty")
                    self.broken.add(name)
        for name, snippet in open_now.items():
            report(f"{self.rel}:{snippet.first}: [page: {name}] has no [/page: {name}] after it")
            self.broken.add(name)


class Sources:
    def __init__(self, root, report):
        self.root = root
        self.report = report
        self.files = {}  # relative path -> Source
        for folder in SOURCE_DIRS:
            for path in sorted((root / folder).rglob("*")):
                if path.suffix in SOURCE_SUFFIXES and path.is_file():
                    self.get(path)

    def get(self, path):
        rel = path.relative_to(self.root).as_posix()
        if rel not in self.files:
            self.files[rel] = Source(self.root, path, self.report)
        return self.files[rel]


class Block:
    """A code comment on a page and the fenced block under it."""

    def __init__(self, line, ref, indent, start, end):
        self.line = line  # line number of the comment
        self.ref = ref
        self.indent = indent  # the fence's indentation
        self.start = start  # index of the first content line
        self.end = end  # index of the closing fence


def closes(line, fence):
    """Whether line is the closing fence of a block opened with fence (```, ~~~~)."""
    m = FENCE.match(line)
    return bool(m) and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) \
        and not m.group(3).strip()


def page_blocks(rel, lines, report):
    """The code comments of a page outside ``` blocks that have a block under them."""
    found = []
    fence = None  # the open fence's characters, while inside a block
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence:
            fence = None if closes(line, fence) else fence
            i += 1
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(2)
            i += 1
            continue
        c = COMMENT.match(line)
        if not c:
            if LOOKS_LIKE_COMMENT.match(line):
                report(f"{rel}:{i + 1}: looks like a code comment but is not "
                       "`<!-- code: PATH#NAME -->` on a line of its own")
            i += 1
            continue
        f = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if f:
            end = i + 2
            while end < len(lines) and not closes(lines[end], f.group(2)):
                end += 1
            if end == len(lines):
                report(f"{rel}:{i + 2}: the block under the code comment at line {i + 1} "
                       "is never closed")
            else:
                found.append(Block(i + 1, c.group(1), len(f.group(1)), i + 2, end))
            i = end + 1
            continue
        report(f"{rel}:{i + 1}: code comment {c.group(1)} has no ``` block on the next line")
        i += 1
    return found


def block_text(lines, block):
    """The block's lines without (up to) the fence's indentation."""
    out = []
    for s in lines[block.start:block.end]:
        spaces = len(s) - len(s.lstrip(" "))
        out.append(s[min(spaces, block.indent):])
    return out


def short_diff(page, source):
    diff = list(difflib.unified_diff(page, source, lineterm="", n=0))[2:]
    shown = ["    " + d for d in diff[:DIFF_LINES]]
    if len(diff) > DIFF_LINES:
        shown.append(f"    ... {len(diff) - DIFF_LINES} more diff lines")
    return shown


def check_page(root, path, sources, report, verbose, fix):
    """Checks one page; returns (blocks compared, lines of --verbose, fixes made)."""
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").split("\n")
    listed, rewrites = [], []
    compared = 0
    for block in page_blocks(rel, lines, report):
        where = f"{rel}:{block.line}"
        file_part, _, name = block.ref.partition("#")
        if not name or not re.fullmatch(NAME, name) or not file_part:
            report(f"{where}: code comment names {block.ref!r}: write PATH#NAME, PATH from "
                   "the repository root")
            continue
        source_path = (root / file_part).resolve()
        if file_part.startswith("/") or root.resolve() not in source_path.parents \
                or not source_path.is_file():
            report(f"{where}: no file {file_part} in the repository")
            continue
        source = sources.get(source_path)
        if name in source.broken:
            report(f"{where}: {block.ref}: the markers of {name} in {file_part} are "
                   "broken (reported above)")
            continue
        snippet = source.snippets.get(name)
        if snippet is None:
            report(f"{where}: {file_part} marks no snippet {name} "
                   f"(it marks: {', '.join(sorted(source.snippets)) or 'none'})")
            continue
        snippet.quoted = True
        compared += 1
        want, have = snippet.text(), block_text(lines, block)
        span = f"{file_part}:{snippet.first + 1}-{snippet.last - 1}"
        if want == have:
            listed.append(f"{where}: {block.ref}: {len(want)} lines equal to {span}")
            continue
        if fix:
            rewrites.append((block, want))
            continue
        report("\n".join([f"{where}: the block differs from {block.ref} ({span}); "
                          "--fix rewrites the page from the source"]
                         + short_diff(have, want)))
    fixed = []
    if rewrites:
        for block, want in sorted(rewrites, key=lambda r: -r[0].start):
            pad = " " * block.indent
            lines[block.start:block.end] = [pad + s if s else "" for s in want]
            fixed.append(f"fixed {rel}:{block.line}: block from {block.ref}")
        path.write_text("\n".join(lines), encoding="utf-8")
        fixed.reverse()
    return compared, listed if verbose else [], fixed


def main(argv):
    options = [a for a in argv if a.startswith("-")]
    args = [a for a in argv if not a.startswith("-")]
    if "-h" in options or "--help" in options:
        print(USAGE)
        return 0
    unknown = [o for o in options if o not in ("--verbose", "--fix")]
    if unknown or len(args) > 1:
        print(f"{USAGE}\n{'unknown option ' + unknown[0] if unknown else 'one REPO_ROOT at most'}",
              file=sys.stderr)
        return 2
    verbose = "--verbose" in options
    fix = "--fix" in options
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    if not root.is_dir():
        print(f"{USAGE}\nno folder {root}", file=sys.stderr)
        return 2
    root = root.resolve()
    problems = []
    sources = Sources(root, problems.append)
    compared = 0
    listed, fixed = [], []
    pages = sorted(root.glob("docs/*.md")) + sorted(root.glob("README.md"))
    for path in pages:
        n, lines, done = check_page(root, path, sources, problems.append, verbose, fix)
        compared += n
        listed += lines
        fixed += done
    if verbose:
        for line in listed:
            print(line)
        for source in sources.files.values():
            for snippet in source.snippets.values():
                if not snippet.quoted and snippet.name not in source.broken:
                    print(f"{source.rel}:{snippet.first}: snippet {snippet.name} is on no page")
    for line in problems + fixed:
        print(line)
    print(f"{compared} code blocks compared with their source: {len(problems)} problem"
          + ("" if len(problems) == 1 else "s")
          + (f", {len(fixed)} blocks rewritten" if fix else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
