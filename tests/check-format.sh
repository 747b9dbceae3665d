#!/usr/bin/env bash
# STYLE §0: the C sources are formatted by the repository's .clang-format. Lists every file
# that clang-format would change, and fails if there is one.
set -u
root=${1:?usage: check-format.sh SOURCE_ROOT [CLANG_FORMAT]}
clang_format=${2:-clang-format}
cd "$root" || exit 1
mapfile -t files < <(find src tests bench -name '*.[ch]' -not -path 'tests/data/*' | sort)
bad=0
for f in "${files[@]}"; do
    if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
        echo "not formatted: $f (run: clang-format -i $f)"
        bad=$((bad + 1))
    fi
done
echo "${#files[@]} files checked, $bad not formatted"
[ "$bad" -eq 0 ]
