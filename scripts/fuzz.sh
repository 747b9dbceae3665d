#!/usr/bin/env bash
# Fuzzes the input parsers for a bounded time: builds BUILD (default build-clang) with clang,
# address + undefined sanitizers (float-cast-overflow included) and libFuzzer (-Dfuzz=enabled),
# then runs meson test suite 'fuzz', two targets at a time, SECONDS (default 30) each:
#   scripts/fuzz.sh [--no-build] [BUILD [SECONDS]]
# A failing input is kept under tests/fuzz/regressions/TARGET/ (fuzz-replay-TARGET replays it
# in every build). The log is BUILD/meson-logs/fuzzlog.json (scripts/test-summary.py counts it).
# Exit 77 when clang or its libFuzzer is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
build=true
if [ "${1:-}" = "--no-build" ]; then
    build=false
    shift
fi
dir=${1:-build-clang}
seconds=${2:-30}
jobs=$(nproc 2>/dev/null || echo 2)

if $build; then
    scripts/clang-sanitize-setup.sh "$dir" || exit $?
    meson compile -C "$dir" -j "$jobs" || exit 1
fi
COLLSIM_FUZZ_SECONDS=$seconds meson test -C "$dir" --no-rebuild --print-errorlogs \
    --num-processes "$jobs" --suite fuzz --logbase fuzzlog
