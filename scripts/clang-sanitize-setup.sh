#!/usr/bin/env bash
# Configures BUILD (default build-clang): clang with address and undefined sanitizers, clang's
# float-cast-overflow check (which gcc's sanitizer lacks) and no recovery from a report, and the
# libFuzzer targets of tests/fuzz (-Dfuzz=enabled). Without the optional backends.
#   scripts/clang-sanitize-setup.sh [BUILD] [MESON_OPTION...]
# Exit 77 when clang or its libFuzzer is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-clang}
shift || true
if ! command -v clang >/dev/null ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return d[0] + (int)n; }' |
       clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
    echo "collsim: no clang with libFuzzer (Debian: apt-get install clang); skipping $dir" >&2
    exit 77
fi
opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=enabled -Dcuda=disabled
      -Dmpi=disabled -Dplots=disabled
      "-Dc_args=-fsanitize=float-cast-overflow -fno-sanitize-recover=all"
      "-Dc_link_args=-fsanitize=float-cast-overflow" "$@")
if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "${opts[@]}" >/dev/null
else
    CC=clang meson setup "$dir" "${opts[@]}" >/dev/null
fi
