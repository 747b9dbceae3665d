#!/usr/bin/env bash
# The tuner plugin under the thread sanitizer, as NCCL uses it from several threads: compiles
# src/tuner/tuner_plugin.c and tests/test-tuner-threads.c with -fsanitize=thread into OUTDIR
# (default build-tsan; a few seconds: two files, no meson) and runs the test, which creates
# communicators on 4 threads and calls getCollInfo on one context from 8 (its own check: every
# answer as a lone call gives it). A data race is a report and exit 66.
#   scripts/tsan-tuner.sh [OUTDIR]
# Exit 77 when no compiler here links -fsanitize=thread.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tsan}
cc=${CC:-}
if [ -z "$cc" ]; then
    for c in clang gcc cc; do
        if command -v "$c" >/dev/null &&
           echo 'int main(void) { return 0; }' |
               "$c" -x c -fsanitize=thread -o /dev/null - 2>/dev/null; then
            cc=$c
            break
        fi
    done
fi
if [ -z "$cc" ]; then
    echo "collsim: no compiler with the thread sanitizer; skipping the tuner's TSAN run" >&2
    exit 77
fi
mkdir -p "$dir" || exit 1
flags=(-fsanitize=thread -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -Wall)
cjson_cflags=$(pkg-config --cflags libcjson 2>/dev/null)
cjson_libs=$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
# shellcheck disable=SC2086
"$cc" "${flags[@]}" $cjson_cflags -fPIC -shared -fvisibility=hidden \
    -o "$dir/libnccl-tuner-collsim.so" src/tuner/tuner_plugin.c $cjson_libs -lm || exit 1
"$cc" "${flags[@]}" -o "$dir/test-tuner-threads" tests/test-tuner-threads.c -ldl -lpthread ||
    exit 1
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" \
    "$dir/test-tuner-threads" "$dir/libnccl-tuner-collsim.so"
