#!/usr/bin/env python3
"""scripts/timeline.sh on a GPU: a lesson traced through tools/timeline.c's library, its
CSV read back (every run's kernel present, every span forward in time, no file left
under the .part name) and drawn by plots/timeline.py.

    tests/test_timeline.py TIMELINE_SH LIBRARY LESSON WORK_DIR   (exit 77: no GPU)
"""
import csv
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPS, WARMUP = 5, 2


def main():
    script, library, lesson, work = sys.argv[1:5]
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    trace = work / "trace.csv"
    trace.unlink(missing_ok=True)
    env = dict(os.environ, CONV_TIMELINE_LIB=library)
    run = subprocess.run([script, str(trace), lesson, "--reps", str(REPS), "--warmup",
                          str(WARMUP)], env=env, capture_output=True, text=True)
    if run.returncode == 77:
        print("skipped: no GPU:", run.stdout.strip().splitlines()[-1:])
        return 77
    assert run.returncode == 0, f"lesson under the tracer: exit {run.returncode}: {run.stderr}"
    assert trace.is_file(), "no trace written"
    assert not Path(str(trace) + ".part").exists(), "the .part file was left behind"
    with open(trace, newline="") as f:
        rows = list(csv.DictReader(f))
    kernels = Counter(r["name"] for r in rows if r["kind"] == "kernel")
    assert kernels, "no kernel in the trace"
    # Each of the lesson's variants runs warm-up and timed runs of its kernel.
    assert max(kernels.values()) >= REPS + WARMUP, f"too few kernel runs: {kernels}"
    for r in rows:
        assert int(r["start_ns"]) <= int(r["end_ns"]), f"a span that ends before it starts: {r}"
    png = work / "timeline.png"
    png.unlink(missing_ok=True)
    plot = Path(__file__).resolve().parents[1] / "plots" / "timeline.py"
    drawn = subprocess.run([sys.executable, str(plot), str(trace), str(png)],
                           capture_output=True, text=True)
    assert drawn.returncode == 0, f"plots/timeline.py: exit {drawn.returncode}: {drawn.stderr}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    print(f"{len(rows)} activities, {len(kernels)} kernels traced and drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
