"""The benchmark scripts of python/bench: --help works anywhere, and without a GPU each
exits 77 with one line saying so (the GPU check runs them for their tables)."""

import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

BENCH = pathlib.Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = ["overhead.py", "seed000.py", "seed004_unet.py"]


def run(script, *args):
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help(script):
    done = run(script, "--help")
    assert done.returncode == 0 and "--csv" in done.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_no_gpu_exits_77(script):
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here: the script would time")
    done = run(script)
    assert done.returncode == 77 and done.stdout == ""
    assert done.stderr.splitlines() == [f"{script}: no CUDA GPU (torch.cuda.is_available() is "
                                        "False); nothing timed"]


def test_bad_flag():
    done = run("overhead.py", "--size", "64")
    assert done.returncode == 2 and "--size '64': HxW" in done.stderr
