"""What a results plot records about the CSV rows it drew, so a test can tell when a
committed PNG no longer matches its CSV (tests/check_plots_fresh.py).

Standard library only: tests/check_plots_fresh.py imports select_rows() and
rows_digest() from here, so the plot scripts and the check hash rows the same way.

A chart's rows are given as a selection: a CSV path and `where`, {column: [values]}, the
rows whose raw field in each named column is one of the values (an empty `where`: every
row). It names the slice of the CSV the chart reads (a lesson, say), not a list of the
rows it happened to show: a row appended later to that slice (a re-run whose last
measurement wins, a new variant) changes the digest too, and the plot reads as stale.

The digest: sha256 over the header line, then the raw text of the selected rows, sorted,
each line ending in "\\n". Sorting makes it blind to the rows' order within the file,
which no chart depends on except through "the last measurement wins": a re-run of a row
adds a line and changes the digest anyway.

The PNG carries one tEXt chunk, keyword METADATA_KEY, its text JSON:
    {"script": "plots/plot.py",
     "sources": [{"csv": "results/h200/bench.csv", "where": {"lesson": ["05_register_tiling"]},
                  "rows": 112, "sha256": "..."}]}
The CSV's path is relative to the repository (absolute for a CSV outside it).
"""
import csv
import hashlib
import json
import os
import re
import sys

METADATA_KEY = "conv-plot-provenance"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A page shows a PNG of docs/img as img/NAME.png (a Markdown image or link).
IMAGE_REF = re.compile(r"img/([A-Za-z0-9_.+-]+\.png)")


class ProvenanceError(Exception):
    """A CSV the selection cannot read; the message names the file."""


def select_rows(path, where):
    """(header line, [raw lines of the rows that match where]) of the CSV at path."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ProvenanceError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ProvenanceError(f"{path}: not UTF-8 text: {e}") from None
    if not lines:
        raise ProvenanceError(f"{path}: empty file, no header")
    header = next(csv.reader([lines[0]]))
    missing = [c for c in where if c not in header]
    if missing:
        raise ProvenanceError(f"{path}: no column {', '.join(missing)} in the header")
    columns = {c: header.index(c) for c in where}
    wanted = {c: set(values) for c, values in where.items()}
    picked = []
    for line in lines[1:]:
        if not line:
            continue
        fields = next(csv.reader([line]))
        if all(i < len(fields) and fields[i] in wanted[c] for c, i in columns.items()):
            picked.append(line)
    return lines[0], picked


def rows_digest(header, lines):
    h = hashlib.sha256()
    for line in [header] + sorted(lines):
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()


def repo_path(path, root=REPO_ROOT):
    """path relative to root, or absolute when it lies outside root."""
    full = os.path.realpath(path)
    rel = os.path.relpath(full, os.path.realpath(root))
    return full if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def source(path, where=None, root=REPO_ROOT):
    """The record of one CSV's rows a chart drew: where {column: [values]}, None for all."""
    where = {c: sorted(set(v)) for c, v in sorted((where or {}).items())}
    header, lines = select_rows(path, where)
    return {"csv": repo_path(path, root), "where": where, "rows": len(lines),
            "sha256": rows_digest(header, lines)}


def metadata(script, sources):
    """The savefig(metadata=...) of a chart drawn by script (a path) from sources
    (source() records)."""
    record = {"script": repo_path(script), "sources": list(sources)}
    return {METADATA_KEY: json.dumps(record, sort_keys=True, separators=(",", ":"))}


def add_shown_in(parser):
    """The --shown-in flag of the chart scripts that `make plots` runs; its value goes to
    shown_images."""
    parser.add_argument("--shown-in", metavar="PAGES_DIR",
                        help="write only the charts a Markdown page under PAGES_DIR shows "
                        "(img/NAME.png), as `make plots` does with docs")


def shown_images(pages_dir):
    """The PNG names the Markdown pages under pages_dir show (img/NAME.png), or None (every
    chart) when pages_dir is None; a missing folder ends the script (exit 2), as it would
    otherwise draw nothing, silently."""
    if pages_dir is None:
        return None
    if not os.path.isdir(pages_dir):
        print(f"--shown-in {pages_dir}: no such folder", file=sys.stderr)
        sys.exit(2)
    names = set()
    for folder, _, files in os.walk(pages_dir):
        for name in files:
            if name.endswith(".md"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    names.update(IMAGE_REF.findall(f.read()))
    return names
