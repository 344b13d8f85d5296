#!/usr/bin/env bash
# expect_exit.sh [--error TEXT] CODE PATH COMMAND...
# Runs COMMAND and passes when it exits with CODE. For CODE 2 (bad input) stderr must
# be exactly one line starting with "error:" and PATH, unless "-", must not exist
# afterwards (nothing half-written). For CODE 0, PATH, unless "-", must exist.
# With --error, the first "error:" line on stderr must hold TEXT (whatever CODE is).
# A command that exits 77 (no GPU) is passed through, so ctest shows it Skipped.
set -u
want=
if [ "$1" = "--error" ]; then
    want=$2
    shift 2
fi
code=$1 path=$2
shift 2
[ "$path" != "-" ] && rm -f "$path"
err=$(mktemp)
"$@" >/dev/null 2>"$err"
got=$?
lines=$(wc -l <"$err")
first=$(head -n 1 "$err")
error=$(grep -m 1 '^error: ' "$err")
rm -f "$err"
if [ "$got" -eq 77 ] && [ "$code" -ne 77 ]; then
    echo "skipped: $first"
    exit 77
fi
if [ "$got" -ne "$code" ]; then
    echo "FAIL: expected exit $code, got $got: $first"
    exit 1
fi
if [ -n "$want" ] && [ "${error#*"$want"}" = "$error" ]; then
    echo "FAIL: expected an error line with '$want', got: ${error:-$first}"
    exit 1
fi
if [ "$code" -eq 2 ]; then
    if [ "$lines" -ne 1 ] || [ "${first#error: }" = "$first" ]; then
        echo "FAIL: expected one 'error: ...' line on stderr, got $lines line(s): $first"
        exit 1
    fi
    if [ "$path" != "-" ] && [ -e "$path" ]; then
        echo "FAIL: $path was written although the input was rejected"
        exit 1
    fi
    echo "rejected as expected: $first"
elif [ "$path" != "-" ]; then
    if [ ! -s "$path" ]; then
        echo "FAIL: $path was not written"
        exit 1
    fi
    rm -f "$path"
fi
exit 0
