#!/usr/bin/env bash
# expect_emulated.sh MODEL EXPECTED COMMAND...
# Runs COMMAND (a lesson) with CONV_EMULATE_GPU=MODEL, a smaller GPU's limits imposed
# on the one there is, and passes when exactly the expected variants are skipped, each
# with its reason, and every other row passes its check. EXPECTED is a ';'-separated
# list of VARIANT=REASON (REASON: a part of the skip line), "*=REASON" when no variant
# can run and the whole run must be skipped (exit 77) for that reason, or empty.
# Without a GPU the lesson's exit 77 is passed through, so ctest shows it Skipped.
set -u
model=$1 expected=${2//\\;/;} # ctest may pass the separators escaped
shift 2
out=$(CONV_EMULATE_GPU=$model "$@" 2>&1)
rc=$?
fail() {
    echo "FAIL ($model): $*"
    echo "$out"
    exit 1
}
if [ $rc -eq 77 ] && grep -q "needs a CUDA GPU and found none" <<<"$out"; then
    echo "$out"
    exit 77
fi
IFS=';' read -r -a entries <<<"$expected"
if [ "${entries[0]:-}" != "" ] && [ "${entries[0]%%=*}" = "*" ]; then
    reason=${entries[0]#*=}
    [ $rc -eq 77 ] || fail "expected the whole run skipped (exit 77), got exit $rc"
    grep -q "^skipped: .*$reason" <<<"$out" || fail "expected 'skipped: ... $reason'"
    echo "skipped as expected under $model: $reason"
    exit 0
fi
[ $rc -eq 0 ] || fail "exit $rc"
grep -q "^emulating: " <<<"$out" || fail "no 'emulating:' line in the header"
skipped=$(grep -cE "^[A-Za-z0-9_]+ +skipped: " <<<"$out")
for entry in "${entries[@]}"; do
    [ -n "$entry" ] || continue
    variant=${entry%%=*} reason=${entry#*=}
    grep -qE "^$variant +skipped: .*$reason" <<<"$out" ||
        fail "expected '$variant skipped: ...$reason'"
    skipped=$((skipped - 1))
done
[ "$skipped" -eq 0 ] || fail "a variant was skipped that was expected to run"
grep -qE " PASS$" <<<"$out" || fail "no row passed"
! grep -qE " FAIL$" <<<"$out" || fail "a row failed its check"
echo "as expected under $model: ${expected:-nothing skipped}"
exit 0
