#!/usr/bin/env python3
"""Checks that every results plot in docs/img still matches the CSV rows it was drawn from.

    python3 tests/check_plots_fresh.py [REPO_ROOT]

A plot script (plots/plot.py, course_at_a_glance.py, plot_frames.py, compare_gpus.py,
04_crossover.py, 12_efficiency.py, ladder.py) records in each PNG it writes the CSV rows it
drew: a tEXt chunk `conv-plot-provenance` holding the CSV path(s), the rows' selection
({column: [values]}, e.g. one lesson) and the sha256 of the header plus those rows' raw
lines, sorted (plots/provenance.py). For every PNG in REPO_ROOT/docs/img this check

* with that record: selects the same rows again from the CSV now (its path relative to
  REPO_ROOT) and compares the hash: a row changed, added or removed in the selection
  makes the plot stale;
* without it: the PNG is stale when its name is a results plot's, drawn before plots
  recorded their rows: `compare_*.png`, `<slug>_*.png` for the slug of any device named
  in results/*/*.csv (nvidia-h200_..., as the scripts name their files), or one of
  NAMED_RESULTS_PLOTS. Other PNGs (the diagrams of plots/diagrams/, drawn from no CSV)
  are passed over.

Prints one line per stale plot and exits 1 if there is any (redraw them with
`make plots`), 0 otherwise; 2 when REPO_ROOT has no docs/img. Standard library only: the
PNG's chunks are read with struct and zlib, the rows selected and hashed by
plots/provenance.py (stdlib too), the same code the scripts record them with.
"""
import csv
import json
import os
import re
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plots"))
import provenance  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Results plots whose names carry no device slug.
NAMED_RESULTS_PLOTS = ("04_crossover.png", "08_ladder.png", "09_ladder.png")
RESULTS_PREFIXES = ("compare_",)


class PngError(Exception):
    pass


def png_text(path):
    """{keyword: text} of the PNG's tEXt, zTXt and iTXt chunks."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE):
        raise PngError("not a PNG file")
    texts, at = {}, len(PNG_SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if len(body) != length:
            raise PngError("truncated chunk")
        at += 12 + length  # length, type, body, CRC
        try:
            if kind == b"tEXt":
                key, _, text = body.partition(b"\0")
                texts[key.decode("latin-1")] = text.decode("latin-1")
            elif kind == b"zTXt":
                key, _, rest = body.partition(b"\0")
                texts[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
            elif kind == b"iTXt":
                key, _, rest = body.partition(b"\0")
                compressed, rest = rest[0], rest[2:]
                _, _, rest = rest.partition(b"\0")  # language tag
                _, _, text = rest.partition(b"\0")  # translated keyword
                texts[key.decode("latin-1")] = (zlib.decompress(text) if compressed
                                                else text).decode("utf-8")
        except (zlib.error, UnicodeDecodeError, IndexError) as e:
            raise PngError(f"unreadable {kind.decode('latin-1')} chunk: {e}") from None
        if kind == b"IEND":
            break
    return texts


def device_slugs(root):
    """The slugs (plot.slugify) of every device named in results/*/*.csv."""
    slugs = set()
    results = os.path.join(root, "results")
    for folder in sorted(os.listdir(results)) if os.path.isdir(results) else []:
        path = os.path.join(results, folder)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
            if not name.endswith(".csv"):
                continue
            try:
                with open(os.path.join(path, name), newline="", encoding="utf-8") as f:
                    reader = csv.reader(f)
                    header = next(reader, [])
                    if "device" not in header:
                        continue
                    column = header.index("device")
                    for fields in reader:
                        if column < len(fields):
                            slugs.add(re.sub(r"[^a-z0-9]+", "-",
                                             fields[column].lower()).strip("-"))
            except (OSError, UnicodeDecodeError, csv.Error):
                continue
    slugs.discard("")
    return slugs


def is_results_plot(name, slugs):
    return (name in NAMED_RESULTS_PLOTS or name.startswith(RESULTS_PREFIXES)
            or any(name.startswith(f"{slug}_") for slug in slugs))


def stale_reasons(root, record):
    """Why a plot with this provenance record is stale ([] when fresh)."""
    try:
        info = json.loads(record)
        sources = info["sources"]
        if not sources:
            return ["its record names no CSV"]
        reasons = []
        for s in sources:
            path = s["csv"] if os.path.isabs(s["csv"]) else os.path.join(root, s["csv"])
            where = s["where"]
            if not os.path.isfile(path):
                reasons.append(f"{s['csv']}: no such file")
                continue
            try:
                header, lines = provenance.select_rows(path, where)
            except provenance.ProvenanceError as e:
                reasons.append(str(e))
                continue
            if provenance.rows_digest(header, lines) != s["sha256"]:
                what = ", ".join(f"{c} in {v}" for c, v in where.items()) or "every row"
                reasons.append(f"{s['csv']}: the rows ({what}) changed since it was drawn "
                               f"({s['rows']} rows then, {len(lines)} now)")
        return reasons
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        return [f"unreadable provenance record: {e!r}"]


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(HERE)
    img = os.path.join(root, "docs", "img")
    if not os.path.isdir(img):
        print(f"check_plots_fresh.py: {img}: no such folder", file=sys.stderr)
        return 2
    slugs = device_slugs(root)
    stale, fresh, passed_over = [], 0, 0
    for name in sorted(os.listdir(img)):
        if not name.endswith(".png") or name.startswith("."):
            continue
        path = os.path.join(img, name)
        try:
            record = png_text(path).get(provenance.METADATA_KEY)
        except (OSError, PngError) as e:
            stale.append(f"docs/img/{name}: cannot read: {e}")
            continue
        if record is None:
            if is_results_plot(name, slugs):
                stale.append(f"docs/img/{name}: no record of the rows it drew "
                             "(drawn before the plots recorded them)")
            else:
                passed_over += 1
            continue
        reasons = stale_reasons(root, record)
        if reasons:
            stale.extend(f"docs/img/{name}: {r}" for r in reasons)
        else:
            fresh += 1
    for line in stale:
        print(line)
    if stale:
        print(f"check_plots_fresh: {len({s.split(':')[0] for s in stale})} stale plot(s), "
              f"{fresh} fresh: redraw them with `make plots`")
        return 1
    print(f"check_plots_fresh: {fresh} plots match their CSV rows "
          f"({passed_over} other PNGs, drawn from no CSV, passed over)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
