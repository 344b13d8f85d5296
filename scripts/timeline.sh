#!/usr/bin/env bash
# timeline.sh CSV COMMAND [ARG...]: runs COMMAND with tools/timeline.c's library loaded
# by the CUDA driver (CUDA_INJECTION64_PATH), which writes every kernel, copy and memset
# of every GPU and every CUDA call of the host to CSV when COMMAND exits;
# plots/timeline.py draws it. COMMAND's own exit status is returned. The library is build/lib/libtimeline.so, or CONV_TIMELINE_LIB.
#
#   scripts/timeline.sh trace.csv build/bin/12_multi_gpu --variant rows_overlap --gpus 2
#   python3 plots/timeline.py trace.csv timeline.png
set -u
if [ $# -lt 2 ]; then
    echo "error: usage: scripts/timeline.sh CSV COMMAND [ARG...]" >&2
    exit 2
fi
csv=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
lib=${CONV_TIMELINE_LIB:-$root/build/lib/libtimeline.so}
if [ ! -f "$lib" ]; then
    echo "error: $lib: not built (make build; it needs the CUDA toolkit's CUPTI)" >&2
    exit 2
fi
if [ ! -d "$(dirname "$csv")" ]; then
    echo "error: $csv: no folder $(dirname "$csv")" >&2
    exit 2
fi
CUDA_INJECTION64_PATH=$lib CONV_TIMELINE=$csv exec "$@"
