# Sourced by the tests of the plot scripts, with their arguments and $usage set: PYTHON,
# the script under test and the test's own third argument (a CSV, a program) as
# $python, $plot and $third; exit 77 when PYTHON has no matplotlib; a scratch folder
# $work, removed at exit; fail MESSAGE.
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
