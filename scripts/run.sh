#!/usr/bin/env bash
# The main job: installs what is missing, builds collsim, and predicts all-reduce on the default
# topology (dgx-h100x4). Extra arguments go to collsim, e.g. scripts/run.sh --op allgather.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null
if [ $# -eq 0 ]; then
    set -- --topo dgx-h100x4 --op allreduce
fi
exec build/src/collsim "$@"
