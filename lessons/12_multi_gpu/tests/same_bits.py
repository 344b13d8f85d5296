#!/usr/bin/env python3
"""Lesson 12's splits give the one-GPU kernel's output bit for bit.

    python3 same_bits.py LESSON_BINARY WORK_DIR

On random layers of awkward shapes (bands thinner than the halo, a GPU with no rows,
a batch that does not divide), writes the inputs as .npy files into WORK_DIR, runs
one_gpu and each split on them with --output, and compares the outputs byte for byte
(each run also checks itself against float64). Every output element is summed in the
same order by the same kernel on every GPU, so nothing may differ. Exit 0 when all
agree, 1 on a difference or a failed run, 77 when the machine cannot run the splits
(no GPU, or one GPU: the lesson's own skip line is shown).
"""
import os
import subprocess
import sys

import numpy as np

SPLITS = ("batch_split", "rows_blocking", "rows_overlap", "peer_copy")
# (batch, cin, cout, height, width, ksize)
LAYERS = (
    (3, 16, 24, 37, 29, 3),   # rows and a batch that split unevenly
    (2, 8, 16, 5, 23, 7),     # bands thinner than the halo: rows from GPUs further away
    (1, 16, 8, 1, 40, 5),     # one row: every GPU but one has nothing
    (4, 64, 64, 64, 48, 1),   # 1x1: no halo at all
)
SKIPPED = 77


def run(binary, args):
    return subprocess.run([binary, *args], capture_output=True, text=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(12)
    failed = False
    for n, cin, cout, h, w, k in LAYERS:
        name = f"{n}x{cin}x{h}x{w}_k{k}_to{cout}"
        files = {f: os.path.join(work, f"{name}_{f}.npy") for f in ("input", "weights", "bias")}
        np.save(files["input"], rng.uniform(-1, 1, (n, cin, h, w)).astype(np.float32))
        np.save(files["weights"], rng.uniform(-1, 1, (cout, cin, k, k)).astype(np.float32))
        np.save(files["bias"], rng.uniform(-1, 1, (cout,)).astype(np.float32))
        data = ["--input", files["input"], "--weights", files["weights"], "--bias", files["bias"]]
        outputs = {}
        for variant in ("one_gpu",) + SPLITS:
            out = os.path.join(work, f"{name}_{variant}.npy")
            if os.path.exists(out):
                os.remove(out)
            r = run(binary, data + ["--variant", variant, "--output", out])
            if r.returncode == SKIPPED:
                print(r.stdout + r.stderr, end="")
                return SKIPPED
            if r.returncode != 0:
                print(f"FAIL {name} {variant}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                failed = True
                continue
            outputs[variant] = np.load(out)
        reference = outputs.get("one_gpu")
        for variant in SPLITS:
            if reference is None or variant not in outputs:
                continue
            got = outputs[variant]
            differ = int(np.count_nonzero(got.view(np.uint32) != reference.view(np.uint32)))
            verdict = "same bits" if differ == 0 else f"FAIL: {differ} elements differ"
            print(f"{name:24} {variant:14} {verdict}")
            failed = failed or differ != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
