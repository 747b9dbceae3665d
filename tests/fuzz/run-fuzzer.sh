#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (meson test suite 'fuzz', scripts/fuzz.sh):
#   run-fuzzer.sh FUZZER REGRESSIONS_DIR CORPUS_DIR [SEED_DIR...]
# COLLSIM_FUZZ_SECONDS (default 30) bounds the run. The working corpus grows in CORPUS_DIR (in
# the build folder); an input that crashes, leaks, times out (10 s) or takes more than 2 GiB is
# written to REGRESSIONS_DIR, which fuzz-replay-NAME replays in every build once committed.
set -uo pipefail
fuzzer=$1 regressions=$2 corpus=$3
shift 3
seconds=${COLLSIM_FUZZ_SECONDS:-30}
mkdir -p "$regressions" "$corpus" || exit 1
# The tuner target rewrites its table file per input: memory, not disk, where there is one.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
before=$(ls "$regressions")
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$regressions/" "$corpus" "$@" 2>&1 |
    grep -v -E '^#[0-9]+' | tail -n 60
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    new=$(comm -13 <(echo "$before") <(ls "$regressions") | head -n 1)
    echo "$(basename "$fuzzer"): failed (exit $status); reproducer: $regressions/$new" \
         "(commit it with the fix: fuzz-replay-${fuzzer##*fuzz-} replays it)" >&2
fi
exit "$status"
