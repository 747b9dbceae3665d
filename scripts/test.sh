#!/usr/bin/env bash
# The whole test suite: installs what is missing, then
#   1. an address+undefined sanitizer build without the optional backends: the unit and golden
#      suites;
#   2. a normal build with CUDA (where nvcc is found) and MPI: every other suite but the
#      benchmarks, the slow one included (its machines of hundreds of GPUs run 3-5 times slower
#      under the sanitizers, whose unit suites cover the same code; GPU tests skip with exit 77
#      where no GPU is present);
#   3. a clang build with address + undefined sanitizers, float-cast-overflow included
#      (build-clang, scripts/clang-sanitize-setup.sh): the unit suite but test-select (too slow
#      there: suite clang-slow), then each input parser fuzzed for COLLSIM_FUZZ_SECONDS
#      (default 30) seconds (scripts/fuzz.sh). Skipped, with a line saying so, where clang or
#      its libFuzzer is missing;
#   4. the tuner plugin and tests/test-tuner-threads.c under the thread sanitizer
#      (scripts/tsan-tuner.sh, seconds): concurrent communicators and getCollInfo calls.
# Under CI (CI=true) warnings are errors. The last line is the plain "N passed, N failed" (the
# line before it "N skipped ..."), counted over individual test cases (TAP lines), and the exit
# status is non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1

werror=false
[ "${CI:-}" = "true" ] && werror=true
jobs=$(nproc 2>/dev/null || echo 2)

status=0
build_failures=0
logs=()

build_and_test () {
    local dir=$1; shift
    local setup_opts=("$@")
    if [ -f "$dir/build.ninja" ]; then
        meson setup --reconfigure "$dir" "${setup_opts[@]}" -Dwerror=$werror >/dev/null || return 1
    else
        meson setup "$dir" "${setup_opts[@]}" -Dwerror=$werror >/dev/null || return 1
    fi
    meson compile -C "$dir" -j "$jobs" || return 1
}

echo "== sanitizer build (build-asan) =="
if build_and_test build-asan -Db_sanitize=address,undefined -Dcuda=disabled -Dmpi=disabled; then
    ASAN_OPTIONS=detect_leaks=1 meson test -C build-asan --no-rebuild --print-errorlogs \
        --num-processes "$jobs" --suite unit --suite golden || status=1
    logs+=(build-asan/meson-logs/testlog.json)
else
    echo "collsim: the sanitizer build failed" >&2
    status=1
    build_failures=$((build_failures + 1))
fi

echo "== full build (build-full) =="
if build_and_test build-full -Dcuda=auto -Dmpi=auto; then
    meson test -C build-full --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --no-suite unit --no-suite golden || status=1
    logs+=(build-full/meson-logs/testlog.json)
else
    echo "collsim: the full build failed" >&2
    status=1
    build_failures=$((build_failures + 1))
fi

echo "== clang sanitizer build and fuzzing (build-clang) =="
scripts/clang-sanitize-setup.sh build-clang -Dwerror=$werror
clang_status=$?
if [ $clang_status -eq 0 ] && meson compile -C build-clang -j "$jobs"; then
    meson test -C build-clang --no-rebuild --print-errorlogs --num-processes "$jobs" \
        --suite unit --no-suite clang-slow || status=1
    logs+=(build-clang/meson-logs/testlog.json)
    scripts/fuzz.sh --no-build build-clang "${COLLSIM_FUZZ_SECONDS:-30}" || status=1
    logs+=(build-clang/meson-logs/fuzzlog.json)
elif [ $clang_status -ne 77 ]; then
    echo "collsim: the clang sanitizer build failed" >&2
    status=1
    build_failures=$((build_failures + 1))
fi

echo "== thread sanitizer: the tuner plugin under concurrent calls (build-tsan) =="
scripts/tsan-tuner.sh build-tsan
tsan_status=$?
if [ $tsan_status -ne 0 ] && [ $tsan_status -ne 77 ]; then
    echo "collsim: the tuner plugin's thread-sanitizer run failed (exit $tsan_status)" >&2
    status=1
fi

python3 scripts/test-summary.py --build-failures "$build_failures" "${logs[@]}" || status=1
exit $status
