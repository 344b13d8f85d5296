#!/usr/bin/env python3
"""Append PyTorch's rows for lesson 10 (the covariance op) to a bench CSV.

    out[b,c0,i0,j0,c0,i0',j0'] += c[c0] * sum_{ci,di,dj} ( mu[b,ci,i0+di,j0+dj] * mu[b,ci,i0'+di,j0'+dj]
                                         + gamma[b,ci,i0+di,j0+dj,ci,i0'+di,j0'+dj] )

(docs/10_covariance.md; n = B, cin = Ci, cout = Co, h x w the input, ksize = k, valid
windows: Ho = h-k+1, Wo = w-k+1, P = h*w, Q = Ho*Wo). Two rows per preset, lesson
10_covariance, variant `pytorch`, fp32 (TF32 off), one per layout of the harness:
  full    the seed's tensors: gamma B x Ci x P x Ci x P, out B x Co x Q x Co x Q
  blocks  the diagonal blocks only: gamma B x Ci x P x P, out B x Co x Q x Q
each the best vectorised PyTorch we know for that layout:
  mu term     U = unfold(mu): B x Ci*k*k x Q, then bmm(U^T, U): B x Q x Q
  gamma term  the Ci diagonal blocks summed first (G: B x P x P), then the k*k shifted
              slices G[:, di:di+Ho, dj:dj+Wo, di:di+Ho, dj:dj+Wo] of G as B x h x w x h x w
  update      S = both terms (one baddbmm_ adds the mu term onto the gamma term);
              blocks: out += c[c0] * S in every block (one addcmul_); full: the same
              through out.diagonal(dim1=1, dim2=3), a view of out's diagonal blocks.
Timed like the harness times a variant: inputs rotated over enough buffer sets to
outgrow the L2 four times, warm-up runs, then one CUDA-event pair per repetition, median
and min. Drawn and checked like the harness (lessons/10_covariance/problem.c):
one run from the drawn state against a float64 gold of the same inputs (and, in the full
layout, every entry outside the diagonal blocks still NaN), with the op's tolerance.
gbps, gflops and roofline_pct come from the op's minimum bytes and FLOPs
(problem.c) and a device-to-device copy's bandwidth (common/measure/gpu_info.c).

Runs only where PyTorch with CUDA imports (the GPU machine has it); elsewhere it says
why and exits 0 without writing. The arguments (the CSV, the lesson binary and the
presets it lists) are checked first, on any machine. Exit 2 on bad arguments, 1 if a row
FAILs (or a preset does not fit in GPU memory).

    python3 scripts/pytorch_covariance.py --csv bench.csv --lesson-bin build/bin/10_covariance \
        --presets cov-toy cov-b8c16s16 cov-b4c32s18
"""
import argparse
import collections
import csv
import datetime
import fcntl
import io
import math
import os
import random
import re
import statistics
import subprocess
import sys

LESSON = "10_covariance"
VARIANT = "pytorch"
DTYPE = "fp32"
FULL, BLOCKS = "full", "blocks"  # cov_layout_names[COV_FULL], [COV_BLOCKS]
LAYOUTS = (FULL, BLOCKS)
# common/measure/report.h's CSV_HEADER (tests/test_pytorch_covariance.py compares the two).
CSV_HEADER = ("lesson,variant,preset,device,n,cin,cout,h,w,ksize,dtype,median_ms,min_ms,"
              "gbps,gflops,roofline_pct,cudnn_ms,vs_cudnn,rel_err,max_abs_err,status,commit,"
              "date,layout,params")
FIELDS = CSV_HEADER.split(",")
NEW_FILE_MODE = 0o666  # common/io/fileutil.c, less the umask

ROTATE_L2_FACTOR = 4   # common/measure/gpu_timer.h
MAX_BUFFER_SETS = 32
DEFAULT_L2_BYTES = 64 << 20  # where torch does not report the L2 (older versions)
COPY_BYTES = 256 << 20  # common/measure/gpu_info.c: the copy that measures the memory roof
COPY_REPS = 10
FP32_U = 2.0 ** -24
ACCUMULATE_SAFETY = 8.0  # common/measure/verify.c
FLT_MIN = 1.1754943508222875e-38
DEVICE = "cuda"  # where the rows are measured (the tests run the parts on "cpu")
# The float64 gold is checked at this many (b, q, q') against the sum written out term by
# term, so a slip in the vectorised formula cannot pass as its own reference.
GOLD_SPOT_CHECKS = 24
GOLD_SPOT_RTOL = 1e-9

PRESET_LINE = re.compile(r"^(\S+)\s+n=(\d+) cin=(\d+) cout=(\d+) (\d+)x(\d+) ksize=(\d+)\b")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Shape = collections.namedtuple("Shape", "n cin cout h w ksize")


class UsageError(Exception):
    """A bad argument: exit 2 with this message."""


# ---------------------------------------------------------------- pure Python parts


def parse_presets(text):
    """{name: Shape} from a lesson's --list-presets output (common/harness/cli.c print_presets:
    `NAME  n=B cin=Ci cout=Co HxW ksize=k[ bias]  what`); other lines are passed over."""
    presets = {}
    for line in text.splitlines():
        m = PRESET_LINE.match(line)
        if m:
            n, cin, cout, h, w, k = (int(g) for g in m.groups()[1:])
            presets[m.group(1)] = Shape(n, cin, cout, h, w, k)
    return presets


def presets_from(binary):
    """The presets `binary --list-presets` prints; UsageError when it cannot say."""
    try:
        out = subprocess.run([binary, "--list-presets"], capture_output=True, text=True,
                             timeout=60)
    except OSError as e:
        raise UsageError(f"--lesson-bin {binary}: cannot run it: {e.strerror or e}") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"--lesson-bin {binary}: --list-presets did not finish") from None
    if out.returncode != 0:
        raise UsageError(f"--lesson-bin {binary}: --list-presets exited {out.returncode}: "
                         f"{out.stderr.strip()}")
    presets = parse_presets(out.stdout)
    if not presets:
        raise UsageError(f"--lesson-bin {binary}: --list-presets printed no presets")
    return presets


def select_presets(presets, names):
    """[(name, Shape)] in the order asked; UsageError naming the unknown ones."""
    unknown = [n for n in names if n not in presets]
    if unknown:
        raise UsageError(f"--presets: unknown {', '.join(unknown)} (the lesson has "
                         f"{', '.join(sorted(presets))})")
    return [(n, presets[n]) for n in names]


def positions(s):
    """(Ho, Wo, P, Q) of a shape: valid windows, positions flattened row-major."""
    ho, wo = s.h - s.ksize + 1, s.w - s.ksize + 1
    return ho, wo, s.h * s.w, ho * wo


def shape_problem(s):
    """None when the op is defined for the shape (problem.c cov_shape_problem), else why."""
    if min(s) < 1:
        return "every size (batch, channels, image, window) must be at least 1"
    if s.ksize > s.h or s.ksize > s.w:
        return "the window is larger than the image: a valid covariance has no output"
    return None


def cov_min_bytes(s, layout, symmetric_gamma=False):
    """problem.c cov_min_bytes(), float32, for COV_FULL and COV_BLOCKS (the same
    bytes: the full layout's diagonal blocks are rows of P and Q contiguous floats): the
    diagonal blocks of gamma read once, mu and c read once, the output blocks read and
    written once (the op adds in place)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}")
    _, _, p, q = positions(s)
    blocks = float(s.n) * s.cin
    gamma = blocks * p * (p + 1) / 2 if symmetric_gamma else blocks * p * p
    mu = blocks * p
    out = float(s.n) * s.cout * q * q
    return 4.0 * (gamma + mu + s.cout + 2 * out)


def cov_flops(s, layout):
    """problem.c cov_flops() for COV_FULL and COV_BLOCKS: per (b, q, q') Ci*k^2 terms
    of 3 FLOPs (multiply, add gamma, accumulate) and 2 per output block (scale, add)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}")
    _, _, _, q = positions(s)
    pairs = float(s.n) * q * q
    return pairs * 3.0 * s.cin * s.ksize * s.ksize + 2.0 * pairs * s.cout


def tensor_counts(s, layout):
    """Elements of (mu, gamma, c, out) as stored in the layout (problem.c)."""
    _, _, p, q = positions(s)
    if layout == FULL:
        return (s.n * s.cin * p, s.n * s.cin * p * s.cin * p, s.cout,
                s.n * s.cout * q * s.cout * q)
    if layout == BLOCKS:
        return s.n * s.cin * p, s.n * s.cin * p * p, s.cout, s.n * s.cout * q * q
    raise ValueError(f"layout {layout!r}")


def set_bytes(s, layout):
    """Bytes of one buffer set (every tensor of the layout, float32)."""
    return 4 * sum(tensor_counts(s, layout))


def buffer_sets_for(set_size, l2_bytes, free_bytes):
    """common/measure/gpu_timer.c buffer_sets_for(): enough sets to outgrow the L2
    ROTATE_L2_FACTOR times, at most MAX_BUFFER_SETS, in half the free memory, at least 1."""
    wanted = -(-ROTATE_L2_FACTOR * l2_bytes // set_size)
    fit = free_bytes // 2 // set_size
    return max(1, min(wanted, fit, MAX_BUFFER_SETS))


def rtol_for(s):
    """problem.c: each output sums 2*Ci*k^2 products and adds them, scaled, to its
    old value: tolerance_for_terms(DTYPE_FP32, 2*Ci*k^2 + 2) of common/measure/verify.c."""
    return ACCUMULATE_SAFETY * math.sqrt(2.0 * s.cin * s.ksize * s.ksize + 2) * FP32_U


def commit(repo=REPO):
    """As cmake/build_info.cmake: the first line of a .commit written for a copy wins,
    then git's short hash (with -dirty when tracked files changed), else "none"."""
    path = os.path.join(repo, ".commit")
    if os.path.exists(path):
        with open(path) as f:
            return f.readline().strip()
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        changes = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                 cwd=repo, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "none"
    if not head:
        return "none"
    return head + "-dirty" if changes.strip() else head


def utc_now():
    """The harness's date column (common/measure/report.c)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


Check = collections.namedtuple("Check", "passed rel_err max_abs checked failures why")


def make_row(preset, s, layout, device, median_ms, min_ms, copy_gbps, result, params,
             commit_id, date):
    """One CSV row (a dict over FIELDS), formatted as common/measure/report.c formats its rows."""
    min_bytes = cov_min_bytes(s, layout)
    roof_ms = min_bytes / (copy_gbps * 1e9) * 1e3 if copy_gbps and copy_gbps > 0 else None
    return {
        "lesson": LESSON, "variant": VARIANT, "preset": preset, "device": device,
        "n": s.n, "cin": s.cin, "cout": s.cout, "h": s.h, "w": s.w, "ksize": s.ksize,
        "dtype": DTYPE, "median_ms": "%.6f" % median_ms, "min_ms": "%.6f" % min_ms,
        "gbps": "%.2f" % (min_bytes / (median_ms * 1e-3) / 1e9),
        "gflops": "%.2f" % (cov_flops(s, layout) / (median_ms * 1e-3) / 1e9),
        # The op is memory-bound (about 2 FLOP/byte, docs/10_covariance.md), so its roof
        # is its minimum bytes over the copy bandwidth.
        "roofline_pct": "" if roof_ms is None else "%.2f" % (100.0 * roof_ms / median_ms),
        "cudnn_ms": "", "vs_cudnn": "",
        "rel_err": "%.3e" % result.rel_err, "max_abs_err": "%.3e" % result.max_abs,
        "status": "PASS" if result.passed else "FAIL", "commit": commit_id, "date": date,
        "layout": layout, "params": params,
    }


def csv_problem(path):
    """None when rows can be appended to `path`, else why not. A missing or empty file
    is fine (the header is written first, as the harness does); an existing one must
    start with CSV_HEADER."""
    if os.path.isdir(path):
        return "is a directory"
    if not os.path.exists(path):
        parent = os.path.dirname(path) or "."
        return None if os.path.isdir(parent) else f"its folder {parent} does not exist"
    try:
        with open(path, newline="") as f:
            first = f.readline()
    except OSError as e:
        return f"cannot read it: {e.strerror}"
    except UnicodeDecodeError:
        return "is not a text file"
    if first and first.rstrip("\r\n") != CSV_HEADER:
        return "its first line is not the header of common/measure/report.h (CSV_HEADER)"
    return None


def rows_text(rows):
    """The rows as CSV lines: quoted only where needed, '\\n' endings (as the harness)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


def append_rows(path, rows):
    """All rows in one write, as common/io/fileutil.c append_line() does: the header first
    into a new or empty file, a newline first after a torn last line, under a lock."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, NEW_FILE_MODE)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # no locks on this file system: append unlocked
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        text = ("\n" if torn else "") + ("" if size else CSV_HEADER + "\n") + rows_text(rows)
        data = text.encode()
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def positive_int(low):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{v}: expected at least {low}")
        return v
    return parse


def parse_args(argv=None):
    """The command line; argparse exits 2 on bad arguments."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--csv", required=True,
                   help="bench CSV to append to (created with the header if missing)")
    p.add_argument("--lesson-bin", required=True,
                   help="lesson 10's binary (build/bin/10_covariance), for --list-presets")
    p.add_argument("--presets", nargs="+", required=True, metavar="PRESET")
    p.add_argument("--reps", type=positive_int(1), default=50, help="timed runs (default 50)")
    p.add_argument("--warmup", type=positive_int(0), default=5,
                   help="untimed runs first (default 5)")
    p.add_argument("--seed", type=positive_int(0), default=1,
                   help="seed of the drawn inputs (default 1)")
    return p.parse_args(argv)


# ---------------------------------------------------------------- PyTorch parts


def gamma_blocks(gamma, layout):
    """(view, dim): a view of gamma's diagonal blocks and the channel dimension in it.
    full: gamma (B, Ci, P, Ci, P) -> diagonal over the two channel dimensions, a view
    (B, P, P, Ci) that reads only the diagonal blocks; blocks: gamma (B, Ci, P, P)."""
    if layout == FULL:
        return gamma.diagonal(dim1=1, dim2=3), -1
    return gamma, 1


def out_blocks(out, layout):
    """A view of the output's diagonal blocks: full (B, Co, Q, Co, Q) -> (B, Q, Q, Co),
    blocks (B, Co, Q, Q) as it is. Writing into it writes into `out`."""
    return out.diagonal(dim1=1, dim2=3) if layout == FULL else out


def window_sum(torch, mu, gsum, k):
    """S (B, Q, Q) = sum_{ci,di,dj} mu*mu' + the channel-summed gamma blocks `gsum`
    (B, P, P), in the dtype of the inputs."""
    b, _, h, w = mu.shape
    ho, wo = h - k + 1, w - k + 1
    g = gsum.reshape(b, h, w, h, w)
    # The k*k shifted slices, each (B, Ho, Wo, Ho, Wo), added into one contiguous sum.
    acc = g[:, :ho, :wo, :ho, :wo].clone(memory_format=torch.contiguous_format)
    for di in range(k):
        for dj in range(k):
            if di or dj:
                acc.add_(g[:, di:di + ho, dj:dj + wo, di:di + ho, dj:dj + wo])
    s = acc.view(b, ho * wo, ho * wo)
    # unfold: (B, Ci*k*k, Q), rows (ci, di, dj), columns q = i0*Wo + j0.
    u = torch.nn.functional.unfold(mu, kernel_size=k)
    return s.baddbmm_(u.transpose(1, 2), u)


def run_op(torch, s, layout, mu, gamma, c, out):
    """The op, in place on `out`."""
    blocks, dim = gamma_blocks(gamma, layout)
    total = window_sum(torch, mu, blocks.sum(dim), s.ksize)
    if layout == FULL:
        # (B, Q, Q, Co) += S[..., None] * c: one kernel, no temporary, through the view.
        out_blocks(out, layout).addcmul_(total.unsqueeze(-1), c)
    else:
        out.addcmul_(total.unsqueeze(1), c.view(1, -1, 1, 1))


def draw(torch, s, layout, gen, device):
    """One buffer set (mu, gamma, c, out) as problem.c cov_op_draw() draws it: mu
    uniform in [-1, 1), c in [0, 1), each diagonal block of gamma symmetric in (p, p')
    (the upper triangle drawn, the lower one its mirror), the output before the op in
    [-1, 1); in the full layout every entry outside the diagonal blocks is NaN."""
    _, _, p, q = positions(s)

    def uniform(*dims):
        return torch.rand(*dims, device=device, generator=gen).mul_(2).sub_(1)

    mu = uniform(s.n, s.cin, s.h, s.w)
    c = torch.rand(s.cout, device=device, generator=gen)
    g = uniform(s.n, s.cin, p, p)
    gd = g.triu().add_(g.triu(1).transpose(-1, -2))
    del g
    ob = uniform(s.n, s.cout, q, q)
    if layout == BLOCKS:
        return mu, gd, c, ob
    gamma = torch.full((s.n, s.cin, p, s.cin, p), float("nan"), device=device)
    gamma_blocks(gamma, FULL)[0].copy_(gd.permute(0, 2, 3, 1))
    del gd
    out = torch.full((s.n, s.cout, q, s.cout, q), float("nan"), device=device)
    out_blocks(out, FULL).copy_(ob.permute(0, 2, 3, 1))
    return mu, gamma, c, out


def direct_sum(torch, s, layout, mu, gamma, b, q, q2):
    """(S, its magnitude) at one (b, q, q') in float64, term by term as problem.c
    cov_sum_at() writes it: the check of the vectorised gold."""
    _, wo, _, _ = positions(s)
    k = s.ksize
    i0, j0 = divmod(q, wo)
    i1, j1 = divmod(q2, wo)
    m = (mu[b, :, i0:i0 + k, j0:j0 + k].double() * mu[b, :, i1:i1 + k, j1:j1 + k].double())
    d = torch.arange(k, device=mu.device)
    p = (i0 + d)[:, None] * s.w + (j0 + d)[None, :]     # (di, dj) -> input position
    p2 = (i1 + d)[:, None] * s.w + (j1 + d)[None, :]
    ci = torch.arange(s.cin, device=mu.device)[:, None, None]
    g = (gamma[b][ci, p, ci, p2] if layout == FULL else gamma[b][ci, p, p2]).double()
    return float((m + g).sum()), float((m.abs() + g.abs()).sum())


def gold(torch, s, layout, mu, gamma, c, out, seed):
    """(ref, magnitude, why) for the output blocks after one run from the drawn state,
    in float64 from the float32 inputs, in the shape of out_blocks(out): ref = before +
    c*S, magnitude = |before| + |c|*(sum |mu*mu'| + sum |gamma|) (the same vectorised
    code on absolute values). `why` is set when the gold disagrees with direct_sum()."""
    blocks, dim = gamma_blocks(gamma, layout)
    g64 = blocks.double()
    mu64 = mu.double()
    total = window_sum(torch, mu64, g64.sum(dim), s.ksize)
    scale = window_sum(torch, mu64.abs(), g64.abs().sum(dim), s.ksize)
    del g64, mu64
    why = None
    _, _, _, q = positions(s)
    pick = random.Random(seed)
    spots = [(0, 0, 0), (s.n - 1, q - 1, q - 1), (0, 0, q - 1)]
    spots += [(pick.randrange(s.n), pick.randrange(q), pick.randrange(q))
              for _ in range(GOLD_SPOT_CHECKS - len(spots))]
    for b, i, j in spots:
        want, mag = direct_sum(torch, s, layout, mu, gamma, b, i, j)
        got = float(total[b, i, j])
        if not abs(got - want) <= GOLD_SPOT_RTOL * mag or not math.isclose(
                float(scale[b, i, j]), mag, rel_tol=GOLD_SPOT_RTOL):
            why = (f"the float64 gold is wrong at (b, q, q') = ({b}, {i}, {j}): "
                   f"{got!r} against {want!r} summed term by term")
            break
    c64 = c.double()
    before = out_blocks(out, layout).double()
    if layout == FULL:   # (B, Q, Q, Co)
        ref = before + total.unsqueeze(-1) * c64
        magnitude = before.abs_() + scale.unsqueeze(-1) * c64.abs()
    else:                # (B, Co, Q, Q)
        ref = before + total.unsqueeze(1) * c64.view(1, -1, 1, 1)
        magnitude = before.abs_() + scale.unsqueeze(1) * c64.abs().view(1, -1, 1, 1)
    return ref, magnitude, why


def check(torch, s, layout, out, ref, magnitude):
    """problem.c cov_op_check() on the whole output: every diagonal-block output
    within FLT_MIN + rtol*magnitude of the gold; rel_err = ||out - ref|| / ||ref|| and
    max_abs_err over them (infinite when one is NaN); in the full layout every entry
    outside the diagonal blocks still NaN."""
    after = out_blocks(out, layout)
    why = None
    # The op adds through a view: the values checked are read from `out`'s own memory.
    if layout == FULL and not (after._base is out and after.data_ptr() == out.data_ptr()):
        why = "the diagonal view is not a view of out"
    diff = after.double().sub_(ref)
    err = diff.abs()
    bad = int((~(err <= FLT_MIN + rtol_for(s) * magnitude)).sum())
    checked = err.numel()
    max_abs = math.inf if bool(torch.isnan(err).any()) else float(err.max())
    diff2, ref2 = float((diff * diff).sum()), float((ref * ref).sum())
    rel = math.sqrt(diff2 / ref2) if ref2 > 0 else math.sqrt(diff2)
    del diff, err
    if bad and not why:
        why = f"{bad} of {checked} outputs outside the tolerance"
    if layout == FULL:
        _, _, _, q = positions(s)
        off = s.n * s.cout * (s.cout - 1) * q * q
        nans = sum(int(torch.isnan(out[b]).sum()) for b in range(s.n))
        kept = nans - int(torch.isnan(after).sum())
        if kept != off:
            why = why or f"{off - kept} entries outside the diagonal blocks written"
            bad += off - kept
        checked += off
    passed = why is None and checked > 0
    return Check(passed, rel, max_abs, checked, bad, why)


def time_sets(torch, fn, sets, warmup, reps):
    """common/measure/gpu_timer.c gpu_time_sets(): warm-up runs, then every repetition between its
    own pair of events, queued back to back over the rotated sets; (median, min) in ms."""
    at = 0
    for _ in range(warmup):
        fn(at)
        at = (at + 1) % sets
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn(at)
        stops[i].record()
        at = (at + 1) % sets
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in zip(starts, stops)]
    return statistics.median(times), min(times)


def copy_bandwidth_gbps(torch):
    """common/measure/gpu_info.c gpu_measure_copy_bandwidth(): a device-to-device copy of 256 MiB,
    one warm-up, the best of 10; bytes read + written over time."""
    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device=DEVICE).fill_(1)
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(COPY_REPS):
        start, stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        dst.copy_(src)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    del src, dst
    torch.cuda.empty_cache()
    return 2.0 * COPY_BYTES / (min(times) * 1e-3) / 1e9


def measure(torch, preset, s, layout, args, device, copy_gbps, commit_id):
    """One row: draw the sets, check one run from the drawn state, time."""
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES
    free, _ = torch.cuda.mem_get_info()
    count = buffer_sets_for(set_bytes(s, layout), l2, free)
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(args.seed)
    sets = [draw(torch, s, layout, gen, DEVICE) for _ in range(count)]
    ref, magnitude, gold_wrong = gold(torch, s, layout, *sets[0], seed=args.seed)
    run_op(torch, s, layout, *sets[0])
    torch.cuda.synchronize()
    result = check(torch, s, layout, sets[0][3], ref, magnitude)
    del ref, magnitude
    if gold_wrong:
        result = result._replace(passed=False, why=gold_wrong)
    median, low = time_sets(torch, lambda i: run_op(torch, s, layout, *sets[i]), count,
                            args.warmup, args.reps)
    params = f"torch={torch.__version__};tf32=off;sets={count}"
    row = make_row(preset, s, layout, device, median, low, copy_gbps, result, params,
                   commit_id, utc_now())
    return row, result


def run(torch, args, chosen):
    """(rows, failed): a row per preset and layout, printed as it is measured; failed
    when one FAILs or did not fit in GPU memory (no row)."""
    torch.backends.cuda.matmul.allow_tf32 = False  # true fp32 in bmm
    torch.set_float32_matmul_precision("highest")
    device = torch.cuda.get_device_name(0)
    copy_gbps = copy_bandwidth_gbps(torch)
    print(f"pytorch_covariance: {device}, torch {torch.__version__}, copy {copy_gbps:.0f} GB/s")
    oom = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    commit_id = commit()
    rows, failed = [], False
    for name, s in chosen:
        for layout in LAYOUTS:
            row = None
            try:
                with torch.no_grad():
                    row, result = measure(torch, name, s, layout, args, device, copy_gbps,
                                          commit_id)
            except oom as e:
                if "out of memory" not in str(e):
                    raise
                print(f"error: {name} {layout}: out of GPU memory "
                      f"({set_bytes(s, layout) / 1e9:.2f} GB per buffer set): no row",
                      file=sys.stderr)
            # Out here the failed attempt's tensors are gone with its traceback.
            torch.cuda.empty_cache()
            if row is None:
                failed = True
                continue
            rows.append(row)
            print(f"{VARIANT} {DTYPE}/{layout:6s} {name:15s} {row['median_ms']:>10s} ms "
                  f"{row['gbps']:>9s} GB/s  roofline {row['roofline_pct'] or '-':>6s}%  "
                  f"rel err {row['rel_err']}  max abs {row['max_abs_err']}  {row['status']}"
                  + (f"  ({result.why})" if result.why else ""))
            failed = failed or not result.passed
    return rows, failed


def main(argv=None):
    args = parse_args(argv)
    try:
        why = csv_problem(args.csv)
        if why:
            raise UsageError(f"--csv {args.csv}: {why}")
        chosen = select_presets(presets_from(args.lesson_bin), args.presets)
        for name, s in chosen:
            why = shape_problem(s)
            if why:
                raise UsageError(f"--presets {name}: {why}")
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print(f"pytorch_covariance: skipped: PyTorch is not installed ({e})")
        return 0
    if not torch.cuda.is_available():
        print("pytorch_covariance: skipped: PyTorch sees no CUDA GPU")
        return 0
    rows, failed = run(torch, args, chosen)
    # One write of all rows: the CSV is never left with part of them.
    if rows:
        try:
            append_rows(args.csv, rows)
        except OSError as e:
            print(f"error: --csv {args.csv}: {e.strerror}", file=sys.stderr)
            return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
