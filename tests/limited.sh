#!/usr/bin/env bash
# limited.sh LIMIT N COMMAND...
# Runs COMMAND under one resource limit, to provoke a failure a test expects:
#   file-blocks N     files grow to at most N blocks (ulimit -f); a write past that
#                     fails with EFBIG, as on a full disk (SIGXFSZ is ignored, so it
#                     does not kill the process instead)
set -eu
limit=$1 n=$2
shift 2
case $limit in
file-blocks)
    trap '' XFSZ
    ulimit -f "$n"
    ;;
*)
    echo "limited.sh: unknown limit '$limit'" >&2
    exit 1
    ;;
esac
exec "$@"
