#!/usr/bin/env bash
# limited.sh LIMIT N COMMAND...
# Runs COMMAND under one resource limit, to provoke a failure a test expects:
#   file-blocks N     files grow to at most N blocks (ulimit -f); a write past that
#                     fails with EFBIG, as on a full disk (SIGXFSZ is ignored, so it
#                     does not kill the process instead)
#   memory-mb N       at most N MB of address space (ulimit -v)
#   asan-memory-mb N  the same for a build with AddressSanitizer, which reserves
#                     terabytes of address space at start: its allocator refuses
#                     blocks over N MB, and malloc returns NULL as it would. The
#                     warning it prints for each refusal is the limit at work, so it
#                     is left out of stderr.
set -eu
limit=$1 n=$2
shift 2
case $limit in
file-blocks)
    trap '' XFSZ
    ulimit -f "$n"
    ;;
memory-mb)
    ulimit -v $((n * 1024))
    ;;
asan-memory-mb)
    limits="max_allocation_size_mb=$n:allocator_may_return_null=1"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$limits"
    set +e
    { "$@" 2>&1 >&3 3>&- | grep -v 'WARNING: AddressSanitizer failed to allocate' >&2; } 3>&1
    exit "${PIPESTATUS[0]}"
    ;;
*)
    echo "limited.sh: unknown limit '$limit'" >&2
    exit 1
    ;;
esac
exec "$@"
