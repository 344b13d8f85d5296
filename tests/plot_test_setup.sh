# Sourced by the tests of the plot scripts, with their arguments and $usage set: PYTHON,
# the script under test and the test's own third argument (a CSV, a program) as
# $python, $plot and $third; exit 77 when PYTHON has no matplotlib; a scratch folder
# $work, removed at exit; fail MESSAGE; run_plot, is_png and expect_refusal below.
if [ $# -ne 3 ]; then
    echo "usage: $0 $usage" >&2
    exit 2
fi
python=$1
plot=$2
third=$3

if ! "$python" -c 'import matplotlib' >/dev/null 2>&1; then
    echo "matplotlib not available: skipped"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Runs the script with the given arguments; sets $rc, output in $work/stdout and $work/stderr.
run_plot() {
    rc=0
    "$python" "$plot" "$@" >"$work/stdout" 2>"$work/stderr" || rc=$?
}

is_png() {
    [ -s "$1" ] && [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ]
}

# Refusals: exit 2, one stderr line naming the culprit, nothing on stdout, nothing written.
expect_refusal() { # WHAT NAME_IN_STDERR OUT_DIR ARGS...
    what=$1 name=$2 dir=$3
    shift 3
    run_plot "$@"
    [ "$rc" -eq 2 ] || fail "$what: exit $rc, expected 2"
    [ "$(wc -l <"$work/stderr" | tr -d ' ')" -eq 1 ] || fail "$what: stderr is not one line: $(cat "$work/stderr")"
    grep -qF "$name" "$work/stderr" || fail "$what: stderr does not name $name: $(cat "$work/stderr")"
    [ ! -s "$work/stdout" ] || fail "$what: wrote on stdout: $(cat "$work/stdout")"
    if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then fail "$what: files written: $(ls -A "$dir")"; fi
}
