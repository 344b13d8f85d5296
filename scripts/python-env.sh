#!/usr/bin/env bash
# Prints the path of a Python that can import matplotlib: the system python3 when it
# already can, else a virtual environment in .venv made from plots/requirements.txt.
# All messages go to stderr, so `PY=$(scripts/python-env.sh)` works.
set -eu
cd "$(dirname "$0")/.."
if python3 -c 'import matplotlib' 2>/dev/null; then
    command -v python3
    exit 0
fi
venv=.venv
if ! "$venv/bin/python" -c 'import matplotlib' 2>/dev/null; then
    echo "setting up $venv for the plots (matplotlib from plots/requirements.txt)" >&2
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -r plots/requirements.txt >&2
fi
echo "$PWD/$venv/bin/python"
