#!/usr/bin/env python3
"""Checks the measured numbers quoted in the docs against results/*/bench.csv.

    python3 tests/check_doc_numbers.py [--verbose] [--fix] [REPO_ROOT]

Prints one line per number that does not match (file:line, what the page says, what the
CSV has), and one per table or console block that looks like results but could not be
read (below), and exits 1 if there is any, 0 otherwise; --verbose also lists every table
and console block it read, with how many numbers, and every one marked as not from the
CSV. Standard library only.

--fix rewrites each mismatched number in place, in the form the page wrote it (same
decimals or significant digits, same suffix: `x`, `×`, `%`, `ms`, `·10⁻⁷`), from the row
it was compared with (of several rows, the nearest); it prints one line per rewrite and
exits 1 if a mismatch is left that it cannot rewrite (no row, a PASS/FAIL). It changes
table cells and console output only: read the diff, and fix the prose around it by hand
(rankings, ratios, "within X %", sums of table numbers), which no check reads.

What it checks
--------------
Markdown tables in docs/*.md and README.md, and the console output the pages quote in
``` blocks, cell by cell:

* A table is read when its first header cell names what a row is: `preset`, `problem`,
  `layer`, `ksize` or `variant` (words in brackets after it are ignored).
* The other columns are read when their header is a metric, a variant, a problem, or a
  variant or problem followed by a metric:
      median ms / ms, min ms, GB/s, GFLOP/s, roofline / % of roofline, vs cuDNN,
      rel err, max abs, check
  e.g. `median ms`, `` `tile_out` ``, `` `block32x8` roofline ``, `cuDNN ms`, `big3`,
  `9×9`. A column whose header has any other words (`what it is`, `` `tile_in` vs 02 ``,
  `best fused`) is not checked: it is derived from two rows, or is prose.
* A `variant` column (or the row key) gives the variant: `` `tile_in` ``, `cuDNN (`gemm`)`,
  and a lesson number in front names another lesson: `02 `block32x8``, also in a header
  (`01 `openmp``). A `lesson` column (`05`) does the same for a whole row. A variant of
  rows that belong to no numbered lesson (`pytorch`, `pytorch_tf32`) names those rows.
  Otherwise the lesson is the page's (docs/NN_*.md).
* A cuDNN column or row may name the format it is in, as dtype and/or layout words of
  the CSV (`cuDNN fp16 NHWC`, `cuDNN TF32 NCHW`): only the rows of that format count.
* A column `X vs FORMAT` (`` `mma_fp16` vs NCHW ``, `bnn-b16c256s28 vs fp32 NCHW`,
  also `vs cuDNN fp32 NCHW`) is a ratio computed from the CSV: cuDNN's median ms at that
  format (of the row's dtype, if it names none) over the row's median ms.
* A problem is a preset name, any of the CSV's (`seed000`, `big5`, `unet-64x64`,
  `bnn-b16c256s28`), standing as a word of the cell, or a filter size
  (`9`, `9×9`, `k=9`, `8192² k=9`): the `custom` row of that ksize, which must be unique
  in the lesson. An empty problem cell repeats the row above. In a header, the preset
  name must stand alone (or before a metric or `vs FORMAT`).
* A cell is a number in the column's metric (median ms when the header names none), or
  `T (R %)`: median ms and % of roofline, or `Nx`/`N×`: vs cuDNN, or `N %`: roofline,
  or PASS/FAIL. `**bold**` and `·10⁻⁷` exponents are understood; a cell with no number
  (`—`, `skipped`) is passed over.
* A console block is read when it has the harness's header line (`lesson NN_name | GPU`),
  a `problem NAME:` line and the table rows under it. The table must be in the harness's
  layout: the header line `variant format median ms min ms GB/s GFLOP/s roofline of
  vs cuDNN rel err max abs check` and rows of 12 words, `VARIANT DTYPE/LAYOUT MEDIAN MIN
  GB/S GFLOP/S R% UNIT VS REL MAX CHECK` (`- -` for no roofline), each compared with the
  CSV row of that dtype and layout. A `VARIANT skipped: ...` line is passed over; a block
  with another table header, or a row of one of the lesson's variants in another shape,
  is reported (the page quotes output the harness no longer prints).
* The GPU is the one whose device name (`NVIDIA H200`) the table's section names last
  before the table (the section starts at the last heading): a measured table must say
  where it was measured. A console block names its GPU on its header line.

No table is skipped in silence
------------------------------
A table looks like results when it has a number outside its first column and names a
problem (a `preset`, `problem`, `layer` or `ksize` first column, or a preset name in its
header or first column) together with a variant or a metric, or a variant (a `variant`
column, or a variant or cuDNN in its header or first column) together with a metric.
A console block looks like results when it has the harness's header line or table
header. Each of these is reported, and fails the check, when:

* not one of its numbers was matched to a CSV row (the table's layout is not one the
  rules above read, or its section names no GPU of results/);
* a row of a read table has numbers but its problem is no preset or filter size of the
  CSV, or its variant none of the lesson's (the row would be passed over), or a console
  row in the harness's layout names a variant without rows, or a console header names a
  GPU without rows.

A table or ``` block whose numbers are not rows of the CSV (predictions, ratios or sums
derived from two rows, another machine, a log the CSV does not hold) says so, with why,
on a line of its own above it (blank lines may come between):

    <!-- not from bench.csv: predictions, written before the first run -->

It is then not checked (--verbose lists it). A marker is itself an error when the table
under it has numbers the rules above do match to the CSV (remove the marker: the table
is checkable), when it says not why, or when no table or block follows it.

A ``` block that quotes one run's console output names the log that run printed, on a
line of its own above it (blank lines may come between):

    <!-- printed by: results/h200/08_ladder/runs_ba9ba7b/run_unet-256x256.log -->

Every non-blank line of the block must then be a line of that file, in the file's order
(lines may be left out between them, trailing blanks aside), and the block is not
compared with the CSV: the log is the run's own record. A missing file, a line the log
does not print, or a `printed by` marker above no block fails.

A number matches when it equals the CSV value rounded to the decimals the page shows
(or the significant digits, for `4.60e-08`). Where the CSV holds several rows for the
same lesson, variant and problem, one of them must match. CSV columns are read by name,
so columns added at the end (`layout`, `params`) change nothing.

What it does not check
----------------------
Numbers in prose, ranges (`32.2–37.0`), ratios between two rows (`tile_out` vs 02),
quantities that are not in the CSV (registers, bytes per output, the sgemm log, the
header line's copy bandwidth), tables whose first header cell is none of the names above
and that do not look like results, and marked tables. Those are checked by reading; keep
the ones that matter in a checkable table.

tests/test_check_doc_numbers.py runs this script on small pages and CSVs of its own and
checks that each rule above reports what it should.
"""
import csv
import re
import sys
from pathlib import Path

METRICS = {  # header words -> CSV column
    "median ms": "median_ms", "ms": "median_ms", "min ms": "min_ms", "gb/s": "gbps",
    "gflop/s": "gflops", "roofline": "roofline_pct", "% of roofline": "roofline_pct",
    "vs cudnn": "vs_cudnn", "rel err": "rel_err", "max abs": "max_abs_err", "check": "status",
}
ROW_KEYS = ("preset", "problem", "layer", "ksize", "variant")
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
# The harness's console table: its header line, and for each word of a row the CSV column
# it is checked against (None: the variant, the format DTYPE/LAYOUT, the roofline's unit).
CONSOLE_HEADER = ("variant format median ms min ms GB/s GFLOP/s roofline of vs cuDNN "
                  "rel err max abs check")
CONSOLE_COLUMNS = [None, None, "median_ms", "min_ms", "gbps", "gflops", "roofline_pct", None,
                   "vs_cudnn", "rel_err", "max_abs_err", "status"]


class Results:
    """Every results/<gpu>/bench.csv, rows looked up by lesson, variant and problem."""

    def __init__(self, root):
        self.root = root
        self.by_gpu = {}  # device name -> rows
        for path in sorted(root.glob("results/*/bench.csv")):
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            # The GPU of a file is the device of its cuDNN rows (the CPU rows of lesson
            # 01 name the host); a file without them offers every device it names.
            gpus = {r["device"] for r in rows if r["variant"] == "cudnn"}
            gpus = gpus or {r["device"] for r in rows}
            for gpu in gpus:
                self.by_gpu.setdefault(gpu, []).extend(rows)
        self.lessons = sorted({r["lesson"] for rows in self.by_gpu.values() for r in rows})
        self.variants = {}
        for rows in self.by_gpu.values():
            for r in rows:
                self.variants.setdefault(r["lesson"], set()).add(r["variant"])
        every = [r for rows in self.by_gpu.values() for r in rows]
        # Every preset name of the CSV (`bnn-b16c256s28` as much as `big3`), and the words
        # a format is written in (`fp16`, `NHWC`, `binary`, `bits`).
        self.presets = {r["preset"] for r in every} - {"custom"}
        self.dtypes = {r["dtype"].lower() for r in every if r["dtype"]}
        self.layouts = {r.get("layout", "").lower() for r in every if r.get("layout")}

    def parse_format(self, text):
        """'fp32 NCHW' -> ('fp32', 'nchw'), 'NCHW' -> (None, 'nchw'); None when text is
        empty or has a word that is neither a dtype nor a layout of the CSV."""
        words = re.findall(r"[\w]+", clean(text).lower())
        dtypes = [w for w in words if w in self.dtypes]
        layouts = [w for w in words if w in self.layouts]
        if not words or len(dtypes) > 1 or len(layouts) > 1 or \
                len(dtypes) + len(layouts) != len(words):
            return None
        return (dtypes[0] if dtypes else None, layouts[0] if layouts else None)

    def lesson(self, number):
        for name in self.lessons:
            if name.startswith(number + "_"):
                return name
        return None

    def find(self, gpu, lesson, variant, problem, fmt=None):
        """fmt, (dtype, layout) with None for either, keeps the rows of that format."""
        dtype, layout = fmt or (None, None)
        rows = [r for r in self.by_gpu.get(gpu, [])
                if r["lesson"] == lesson and r["variant"] == variant and
                (dtype is None or r["dtype"].lower() == dtype) and
                (layout is None or r.get("layout", "").lower() == layout)]
        if problem.get("preset"):
            return [r for r in rows if r["preset"] == problem["preset"]]
        rows = [r for r in rows if r["preset"] == "custom" and
                int(r["ksize"]) == problem["ksize"]]
        if problem.get("h"):
            rows = [r for r in rows if int(r["h"]) == problem["h"] and
                    int(r["w"]) == problem["w"]]
        if len({(r["h"], r["w"], r["n"], r["cin"], r["cout"]) for r in rows}) > 1:
            raise LookupError(f"{len(rows)} custom rows with ksize {problem['ksize']}: "
                              "name the size")
        return rows


def parse_number(text):
    """'1.42x' -> (1.42, tolerance); '8.98·10⁻⁸' and '4.60e-08' too. None if no number."""
    text = text.translate(SUPERSCRIPT).replace("·10", "e").replace("−", "-")
    m = re.fullmatch(r"\s*(-?\d+(?:\.(\d+))?)(?:e([-+]?\d+))?\s*(?:x|×|%|ms)?\s*", text)
    if not m:
        return None
    decimals = len(m.group(2) or "")
    exponent = int(m.group(3) or 0)
    value = float(m.group(1)) * 10.0 ** exponent
    return value, 0.5 * 10.0 ** (exponent - decimals) * 1.0001 + 1e-12


SUPERSCRIPT_OUT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def format_like(shown, value):
    """value written the way shown is: '0.144' -> '0.022', '1.42x' -> '6.45x',
    '4.60e-08' -> '4.55e-08', '8.98·10⁻⁸' -> '9.12·10⁻⁸'. None if shown is no number."""
    m = re.fullmatch(r"(\s*)(-?\d+(?:\.(\d+))?)(e[-+]?\d+|·10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(.*)", shown)
    if not m or parse_number(shown) is None:
        return None
    lead, _, decimals, exponent, suffix = m.groups()
    decimals = len(decimals or "")
    if not exponent:
        return f"{lead}{value:.{decimals}f}{suffix}"
    mantissa, power = f"{value:.{decimals}e}".split("e")
    if exponent.startswith("e"):
        digits = len(exponent.lstrip("e-+"))
        sign = "-" if int(power) < 0 else ("+" if exponent[1] == "+" else "")
        return f"{lead}{mantissa}e{sign}{abs(int(power)):0{digits}d}{suffix}"
    return f"{lead}{mantissa}·10{str(int(power)).translate(SUPERSCRIPT_OUT)}{suffix}"


def clean(cell):
    return cell.replace("**", "").replace("`", "").strip()


def find_preset(text, known_presets):
    """The longest preset name standing as a word of text (`bnn-b16c256s28`, `big3` in
    `big3 (8192², 3×3)`), with the text around it; (None, text) when there is none."""
    found = [(m, name) for name in known_presets
             for m in [re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)] if m]
    if not found:
        return None, text
    m, name = max(found, key=lambda f: len(f[1]))
    return name, (text[:m.start()] + " " + text[m.end():]).strip()


def parse_problem(text, known_presets, strict=False):
    """A problem cell or header: a preset name, or a ksize with an optional size. Words
    around a preset name are allowed (`big3 (8192², 3×3)`) unless strict (a header)."""
    text = clean(text)
    name, rest = find_preset(text, known_presets)
    if name:
        return {"preset": name} if not (strict and rest) else None
    m = re.fullmatch(r"(?:(\d+)(?:²|x(\d+)) )?(?:k=)?(\d+)(?:×\3)?(?: \((\d+)²\))?", text)
    if not m:
        return None
    side = m.group(1) or m.group(4)
    problem = {"ksize": int(m.group(3))}
    if side:
        problem.update(h=int(side), w=int(m.group(2) or side))
    return problem


# A line of its own above a table or a ``` block (blank lines between are allowed) that
# says the numbers under it are not rows of results/*/bench.csv, and why: predictions,
# numbers derived from two rows, another machine, a log the CSV does not hold.
MARKER = re.compile(r"\s*<!--\s*not from bench\.csv\b:?(.*?)-->\s*$")
PRINTED_BY = re.compile(r"\s*<!--\s*printed by:\s*(\S+)\s*-->\s*$")
MARKER_HOWTO = "<!-- not from bench.csv: WHY -->"


def has_number(cell):
    return re.search(r"\d", clean(cell)) is not None


class Page:
    def __init__(self, path, results, report):
        self.path = path
        self.results = results
        self.report = report
        number = re.match(r"(\d\d)_", path.name)
        self.lesson = results.lesson(number.group(1)) if number else None
        self.presets = results.presets
        self.checked = 0
        self.tables = []
        self.fixes = []  # (line number, ("cell"|"word", index), [(shown, rewrite)])

    def gpu_at(self, lines, index):
        """The GPU named last in the section (since the last heading) before line index."""
        section = []
        for line in reversed(lines[:index]):
            section.insert(0, line)
            if line.startswith("#"):
                break
        text = " ".join(section)
        named = [(text.rfind(g), g) for g in self.results.by_gpu if g in text]
        return max(named)[1] if named else None

    def split_variant(self, text, lesson):
        """'02 block32x8' -> ('02_gpu_naive', 'block32x8', ''); 'cuDNN (gemm)' -> cudnn.
        The lesson is the one named in front, else the one given; the variant is None
        when the text does not start with one of that lesson's variants."""
        text = clean(text)
        m = re.match(r"(\d\d) (.*)", text)
        if m:
            lesson = self.results.lesson(m.group(1))
            text = m.group(2)
        if text.lower().startswith("cudnn"):
            return lesson, "cudnn", text[5:].strip()
        word = text.split(" ")[0]
        if lesson and word in self.results.variants.get(lesson, ()):
            return lesson, word, text[len(word):].strip()
        for other in self.results.lessons:
            if not re.match(r"\d\d_", other) and word in self.results.variants.get(other, ()):
                return other, word, text[len(word):].strip()
        return lesson, None, text

    def row_format(self, rest):
        """The format the words after a row's variant name (`cuDNN fp32 NCHW`), if they
        are one; other words (`cuDNN (gemm)`) name no format."""
        return self.results.parse_format(rest) if rest else None

    @staticmethod
    def split_metric(text):
        """'`block32x8` roofline' -> ('`block32x8`', 'roofline_pct'); no metric: None."""
        if clean(text).lower() in METRICS:
            return "", METRICS[clean(text).lower()]
        for word in sorted(METRICS, key=len, reverse=True):
            if text.lower().endswith(" " + word):
                return text[:-len(word) - 1].strip(), METRICS[word]
        return text, None

    def header_column(self, text, row_key):
        """What a column header names: (lesson named in it or None, variant, problem,
        metric, format), or None when the column is not checked. The metric is a CSV
        column, or ("ratio", dtype, layout) for `X vs fp32 NCHW`: cuDNN's median ms at
        that format over X's (the dtype, when not named, is X's own)."""
        text, metric = self.split_metric(clean(text))
        if not text:
            return None, None, None, metric, None
        m = re.fullmatch(r"(.+?) vs (?:cudnn )?(.+)", text, re.IGNORECASE)
        fmt = m and metric is None and self.results.parse_format(m.group(2))
        if fmt:
            metric, text = ("ratio",) + fmt, m.group(1)
        lesson, variant, rest = self.split_variant(text, None)
        if lesson is None:
            _, variant, rest = self.split_variant(text, self.lesson)
        if variant is not None:
            fmt = self.row_format(rest)
            return (lesson, variant, None, metric, fmt) if not rest or fmt else None
        if row_key == "variant":
            problem = parse_problem(text, self.presets, strict=True)
            if problem:
                return None, None, problem, metric, None
        return None

    def have_values(self, gpu, lesson, problem, rows, column):
        """The values the CSV rows offer for a column; for a ratio column, cuDNN's median
        ms at the format over each row's."""
        if not isinstance(column, tuple):
            return [float(r[column]) for r in rows if r[column] != ""]
        _, dtype, layout = column
        have = []
        for r in rows:
            fmt = (dtype or r["dtype"].lower(), layout)
            for base in self.results.find(gpu, lesson, "cudnn", problem, fmt):
                if float(r["median_ms"]) > 0:
                    have.append(float(base["median_ms"]) / float(r["median_ms"]))
        return have

    def check_cell(self, line_no, gpu, lesson, variant, problem, metric, cell, fmt=None):
        """Reports each number of the cell that does not match; returns (shown, rewrite)
        for each of them that --fix can rewrite, in the order they stand in the cell."""
        fixes = []
        cell = clean(cell)
        if not cell or cell in ("-", "—"):
            return fixes
        values = {}
        both = re.fullmatch(r"([\d.]+) \(([\d.]+) ?%\)", cell)
        if both:
            values = {"median_ms": both.group(1), "roofline_pct": both.group(2)}
        elif cell in ("PASS", "FAIL"):
            values = {"status": cell}
        elif metric:
            values = {metric: cell}
        elif re.search(r"[x×]$", cell):
            values = {"vs_cudnn": cell}
        elif cell.endswith("%"):
            values = {"roofline_pct": cell}
        else:
            values = {"median_ms": cell}
        values = {c: v for c, v in values.items()
                  if c == "status" or parse_number(v) is not None}
        if not values:
            return fixes
        where = f"{self.path.name}:{line_no}"
        shape = "/".join(f or "*" for f in fmt) if fmt else ""
        try:
            rows = self.results.find(gpu, lesson, variant, problem, fmt)
        except LookupError as e:
            self.report(f"{where}: {lesson} {variant}: {e}")
            return fixes
        if not rows:
            self.report(f"{where}: no row in results for {lesson} {variant} {problem}"
                        f"{' ' + shape if shape else ''} ({gpu})")
            return fixes
        for column, shown in values.items():
            if column == "status":
                ok = any(r["status"] == shown for r in rows)
                have = rows[0]["status"]
            else:
                value, tolerance = parse_number(shown)
                have = self.have_values(gpu, lesson, problem, rows, column)
                ok = any(abs(value - h) <= tolerance for h in have)
                nearest = min(have, key=lambda h: abs(h - value), default=None)
                have = ", ".join(f"{h:g}" for h in have) or "empty"
            self.checked += 1
            if not ok:
                name = problem.get("preset") or f"ksize {problem['ksize']}"
                label = column if not isinstance(column, tuple) else \
                    "cuDNN " + "/".join(f or "*" for f in column[1:]) + " ms ÷ its ms"
                self.report(f"{where}: {lesson} {variant}{' ' + shape if shape else ''} "
                            f"{name} {label}: page says {shown}, results have {have}")
                if column != "status":
                    new = None if nearest is None else format_like(shown, nearest)
                    if new is not None:
                        fixes.append((shown, new))
        return fixes

    def looks_like_results(self, header, body):
        """Whether a table looks like measured results: it has numbers, and names a
        problem (a preset name, or a problem column) and a variant or a metric, or a
        variant and a metric."""
        key = re.sub(r"\s*\(.*\)$", "", clean(header[0]).lower())
        names = [clean(c) for c in header] + [clean(cells[0]) for _, cells in body if cells]
        problem = key in ROW_KEYS[:-1] or \
            any(find_preset(text, self.presets)[0] for text in names)
        variant = key == "variant" or any(clean(h).lower() == "variant" for h in header) or \
            any(text and self.split_variant(text, self.lesson)[1] for text in names)
        metric = any(self.split_metric(clean(h))[1] for h in header[1:])
        numbers = any(has_number(c) for _, cells in body for c in cells[1:])
        return numbers and ((problem and (variant or metric)) or (variant and metric))

    def dry_run(self, check, *args):
        """How many numbers check(*args) matches to the CSV, reporting and fixing
        nothing."""
        saved = self.checked, self.report, list(self.fixes), list(self.tables)
        self.report = lambda line: None
        try:
            check(*args)
            return self.checked - saved[0]
        finally:
            self.checked, self.report, self.fixes, self.tables = saved

    def check_table(self, lines, start, rows, marker=None):
        where = f"{self.path.name}:{start + 1}"
        if marker is not None:
            checked = self.dry_run(self.read_table, lines, start, rows)
            if checked:
                self.report(f"{where}: table marked not from bench.csv ({marker}), but "
                            f"{checked} of its numbers are read from results/*/bench.csv: "
                            "remove the marker")
            self.tables.append(f"skipped {where}: marked not from bench.csv: {marker}")
            return
        looks = self.looks_like_results(rows[0][1], rows[2:])
        if looks and self.gpu_at(lines, start) is None:
            self.report(f"{where}: table looks like measured results, but its section names "
                        f"no GPU of results/ ({', '.join(self.results.by_gpu)}): name the GPU "
                        f"it was measured on, or mark it {MARKER_HOWTO} on the line above")
            return
        checked = self.read_table(lines, start, rows)
        if looks and not checked:
            self.report(f"{where}: table looks like measured results (a preset, variant or "
                        "metric, and numbers), but none of its numbers was matched to "
                        "results/*/bench.csv: write it so that it can be read (see the top "
                        f"of {Path(__file__).name}), or mark it {MARKER_HOWTO} on the line "
                        "above")

    def read_table(self, lines, start, rows):
        """Checks the table's cells; returns how many numbers, None if it is not read."""
        header = rows[0][1]
        key = re.sub(r"\s*\(.*\)$", "", clean(header[0]).lower())
        if key not in ROW_KEYS:
            return None
        row_key = "variant" if key == "variant" else "problem"
        columns = {i: self.header_column(h, row_key) for i, h in enumerate(header) if i}
        if not any(columns.values()):
            return None
        gpu = self.gpu_at(lines, start)
        if gpu is None:
            return None
        variant_col = next((i for i, h in enumerate(header)
                            if i and clean(h).lower() == "variant"), None)
        lesson_col = next((i for i, h in enumerate(header) if clean(h).lower() == "lesson"),
                          None)
        before = self.checked
        problem = None
        for line_no, cells in rows[2:]:
            lesson = self.lesson
            if lesson_col is not None:
                lesson = self.results.lesson(clean(cells[lesson_col])[:2]) or lesson
            row_fmt = None
            if row_key == "problem":
                if clean(cells[0]):
                    problem = parse_problem(cells[0], self.presets)
                row_variant = None
                if variant_col is not None:
                    lesson, row_variant, rest = self.split_variant(cells[variant_col], lesson)
                    row_fmt = self.row_format(rest)
            else:
                lesson, row_variant, rest = self.split_variant(cells[0], lesson)
                row_fmt = self.row_format(rest)
            unmatched = []
            for i, column in columns.items():
                if column is None or i >= len(cells) or i == variant_col:
                    continue
                col_lesson, col_variant, col_problem, metric, col_fmt = column
                variant = col_variant or row_variant
                the_problem = col_problem or problem
                if variant is None or the_problem is None:
                    if has_number(cells[i]):
                        unmatched.append(clean(header[i]))
                    continue
                fmt = None
                if col_fmt or row_fmt:
                    fmt = tuple(c or r for c, r in zip(col_fmt or (None, None),
                                                       row_fmt or (None, None)))
                fixes = self.check_cell(line_no, gpu, col_lesson or lesson, variant,
                                        the_problem, metric, cells[i], fmt)
                if fixes:
                    self.fixes.append((line_no, ("cell", i), fixes))
            if unmatched:
                what = (f"problem {clean(cells[0])!r} is no preset of results/ nor a filter "
                        "size" if row_key == "problem" and problem is None else
                        f"variant {clean(cells[variant_col if row_key == 'problem' else 0])!r}"
                        f" is none of {lesson}'s")
                self.report(f"{self.path.name}:{line_no}: row not matched to results ({what}): "
                            f"its numbers under {', '.join(unmatched)} are not checked")
        self.tables.append(f"checked {self.path.name}:{start + 1}: {self.checked - before} numbers "
                           f"({gpu})")
        return self.checked - before

    def check_console(self, lines, block, marker=None):
        if not block:
            return
        where = f"{self.path.name}:{block[0][0]}"
        if marker is not None:
            checked = self.dry_run(self.read_console, block)
            if checked:
                self.report(f"{where}: console block marked not from bench.csv ({marker}), "
                            f"but {checked} of its numbers are read from results/*/bench.csv:"
                            " remove the marker")
            self.tables.append(f"skipped {where}: marked not from bench.csv: {marker}")
            return
        looks = any(re.match(r"lesson \d\d_\w+ \|", line) or
                    (line.split()[:1] == ["variant"] and "median ms" in line)
                    for _, line in block)
        if not self.read_console(block) and looks:
            self.report(f"{where}: console block looks like the harness's output, but none "
                        "of its numbers was matched to results/*/bench.csv (it needs the "
                        "`lesson NN_name | GPU` line, a `problem NAME:` line and the table "
                        f"under it), or mark it {MARKER_HOWTO} on the line above")

    def read_console(self, block):
        """Checks a console block; returns how many numbers."""
        lesson = gpu = problem = None
        header = False  # the table header line of the harness's layout was seen
        before = self.checked
        for line_no, line in block:
            where = f"{self.path.name}:{line_no}"
            m = re.match(r"lesson (\d\d_\w+) \|", line)
            if m:
                lesson = m.group(1)
                gpu = next((g for g in self.results.by_gpu if f"| {g} |" in line), None)
                if gpu is None:
                    self.report(f"{where}: console header names no GPU of results/ "
                                f"({', '.join(self.results.by_gpu)}): {line.strip()!r}")
                header = False
                continue
            m = re.match(r"problem (\S+): .* (\d+)x(\d+) ksize=(\d+)", line)
            if m:
                problem = ({"preset": m.group(1)} if m.group(1) != "custom" else
                           {"ksize": int(m.group(4)), "h": int(m.group(2)),
                            "w": int(m.group(3))})
                header = False
                continue
            if not (lesson and gpu and problem):
                continue
            cells = line.split()
            if cells[:1] == ["variant"]:
                header = " ".join(cells) == CONSOLE_HEADER
                if not header:
                    self.report(f"{where}: console table header is not the harness's "
                                f"({CONSOLE_HEADER!r}): {' '.join(cells)!r}")
                continue
            if not cells:
                continue
            if cells[0] not in self.results.variants.get(lesson, ()):
                if header and len(cells) == len(CONSOLE_COLUMNS) and \
                        re.fullmatch(r"\w+/\w+", cells[1]):
                    self.report(f"{where}: console row of a variant that {lesson} has no "
                                f"row of in results/: {line.strip()!r}")
                continue
            if cells[1:2] == ["skipped:"]:
                continue
            if not header or len(cells) != len(CONSOLE_COLUMNS) or \
                    not re.fullmatch(r"\w+/\w+", cells[1]):
                self.report(f"{where}: console row not in the harness's layout (under its "
                            f"table header, {len(CONSOLE_COLUMNS)} words): {line.strip()!r}")
                continue
            fmt = tuple(cells[1].lower().split("/"))
            try:
                rows = self.results.find(gpu, lesson, cells[0], problem, fmt)
            except LookupError:
                rows = None  # check_cell reports it
            if rows == []:
                self.report(f"{where}: no row in results for {lesson} {cells[0]} {problem} "
                            f"{cells[1]} ({gpu})")
                continue
            for i, (column, shown) in enumerate(zip(CONSOLE_COLUMNS, cells)):
                if column is None:
                    continue
                fixes = self.check_cell(line_no, gpu, lesson, cells[0], problem, column,
                                        shown, fmt=fmt)
                if fixes:
                    self.fixes.append((line_no, ("word", i), fixes))
        if self.checked > before:
            self.tables.append(f"checked {self.path.name}:{block[0][0]}: {self.checked - before} "
                               f"numbers ({gpu}, console output)")
        return self.checked - before

    def check_printed(self, block, printed):
        """The block's lines against the log named above it: each non-blank line, in
        order, must be one of the log's lines."""
        line_no, name = printed
        log = self.results.root / name  # from the repository's root, README's too
        if not log.is_file():
            self.report(f"{self.path.name}:{line_no}: printed by {name}: no such file")
            return
        printed_lines = [line.rstrip() for line in log.read_text(errors="replace").splitlines()]
        at = 0
        for number, line in block:
            if not line.strip():
                continue
            try:
                at = printed_lines.index(line.rstrip(), at) + 1
            except ValueError:
                self.report(f"{self.path.name}:{number}: not a line {name} printed (after the "
                            f"block's lines above it): {line.strip()!r}")
                return
        self.tables.append(f"printed {self.path.name}:{block[0][0] if block else line_no}: "
                           f"{sum(1 for _, l in block if l.strip())} lines of {name}")

    def fix(self):
        """Rewrites the numbers check() found wrong; returns a line per rewrite."""
        lines = self.path.read_text().split("\n")
        done = []
        for line_no, (kind, index), fixes in self.fixes:
            line = lines[line_no - 1]
            if kind == "cell":  # the index-th cell between the table's pipes
                pipes = [i for i, c in enumerate(line) if c == "|"] + [len(line)]
                start, end = pipes[index] + 1, pipes[index + 1]
            else:  # the index-th word of console output
                span = list(re.finditer(r"\S+", line))[index].span()
                start, end = span
            text, at = line[start:end], 0
            for shown, new in fixes:
                at = text.find(shown, at)
                if at < 0:
                    done.append(f"{self.path.name}:{line_no}: could not find {shown!r}")
                    break
                text = text[:at] + new + text[at + len(shown):]
                at += len(new)
                done.append(f"{self.path.name}:{line_no}: {shown} -> {new}")
            if kind == "word":  # keep the column's right edge
                width = end - start
                if len(text) < width:
                    text = " " * (width - len(text)) + text
                elif len(text) > width:
                    spaces = len(line[:start]) - len(line[:start].rstrip(" "))
                    cut = min(len(text) - width, max(spaces - 1, 0))
                    start -= cut
            lines[line_no - 1] = line[:start] + text + line[end:]
        if self.fixes:
            self.path.write_text("\n".join(lines))
        return done

    def check(self):
        lines = self.path.read_text().splitlines()
        table, block, in_code = [], [], False
        marker = None  # (line number, why) of a marker waiting for its table or block
        above = None  # the marker of the table or block being read
        printed = None  # (line number, log) of a `printed by` marker waiting for its block
        printed_above = None  # the one of the block being read

        def unused(marker):
            self.report(f"{self.path.name}:{marker[0]}: marker {MARKER_HOWTO!r} is not "
                        "right above a table or a ``` block (blank lines may come between)")

        for number, line in enumerate(lines + [""], start=1):
            if line.startswith("```"):
                if in_code:
                    if printed_above:
                        self.check_printed(block, printed_above)
                    else:
                        self.check_console(lines, block, above)
                else:
                    above, marker = marker and marker[1], None
                    printed_above, printed = printed, None
                in_code, block = not in_code, []
                continue
            if in_code:
                block.append((number, line))
                continue
            if line.startswith("|"):
                if not table:
                    above, marker = marker and marker[1], None
                table.append((number, [c.strip() for c in line.strip().strip("|").split("|")]))
                continue
            if len(table) > 2:
                self.check_table(lines, table[0][0] - 1, table, above)
            elif table and above is not None:
                unused((table[0][0] - 1, above))
            table, above = [], None
            m = PRINTED_BY.match(line)
            if m:
                if printed:
                    self.report(f"{self.path.name}:{printed[0]}: `printed by` marker is not "
                                "right above a ``` block")
                printed = (number, m.group(1))
                continue
            if line.strip() and printed:
                self.report(f"{self.path.name}:{printed[0]}: `printed by` marker is not right "
                            "above a ``` block")
                printed = None
            m = MARKER.match(line)
            if m:
                if marker:
                    unused(marker)
                marker = (number, m.group(1).strip())
                if not marker[1]:
                    self.report(f"{self.path.name}:{number}: marker says not why: write "
                                f"{MARKER_HOWTO}")
                continue
            if line.strip() and marker:
                unused(marker)
                marker = None
        if marker:
            unused(marker)
        if printed:
            self.report(f"{self.path.name}:{printed[0]}: `printed by` marker is not right "
                        "above a ``` block")


def main():
    args = [a for a in sys.argv[1:] if a not in ("--verbose", "--fix")]
    verbose = "--verbose" in sys.argv[1:]
    fix = "--fix" in sys.argv[1:]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[1]
    results = Results(root)
    if not results.by_gpu:
        print(f"no results/*/bench.csv under {root}")
        return 1
    problems = []
    fixed = []
    total = 0
    pages = sorted(root.glob("docs/*.md")) + sorted(root.glob("README.md"))
    for path in pages:
        page = Page(path, results, problems.append)
        page.check()
        total += page.checked
        if verbose:
            for table in page.tables:
                print(table)
        if fix:
            fixed.extend(page.fix())
    if fix:
        for line in fixed:
            print("fixed " + line)
        left = len(problems) - sum(1 for line in fixed if " -> " in line)
        print(f"{total} numbers checked against {', '.join(results.by_gpu)}: "
              f"{len(problems)} mismatches, {len(problems) - left} rewritten")
        if left:
            print(f"{left} not rewritten: run again without --fix to see them")
        return 1 if left else 0
    for line in problems:
        print(line)
    print(f"{total} numbers checked against {', '.join(results.by_gpu)}: "
          f"{len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
