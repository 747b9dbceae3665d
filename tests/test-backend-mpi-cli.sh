#!/bin/sh
# SPDX-License-Identifier: MIT
# `collsim measure --backend mpi` end to end, under mpirun and alone (an MPI singleton):
# the trace it prints (headers, one row per size, #wrong 0), only rank 0 printing, and the exit
# status of bad input. Usage: test-backend-mpi-cli.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]
set -u

collsim=$1
mpirun=$2
shift 2
failures=0

fail () {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 4 ranks, all-reduce over ring, -b 8 -e 64K -f 4: sizes 8, 32, 128, 512, 2K, 8K, 32K = 7 rows.
"$mpirun" "$@" -np 4 "$collsim" measure --backend mpi --op allreduce --algo ring \
    -b 8 -e 64K -f 4 -n 2 -w 1 >"$tmp/out" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "allreduce ring -np 4 exited $status: $(cat "$tmp/err")"
rows=$(grep -c '^ *[0-9]' "$tmp/out")
[ "$rows" -eq 7 ] || fail "expected 7 rows (one per size, rank 0 only), got $rows"
for header in '# backend: mpi' '# collective: all_reduce' '# ranks: 4' '# algo/proto: ring/Simple (collsim schedule)' \
              '# algo: ring' '# proto: Simple' \
              '# launcher: MPI, 4 processes, one rank each' '# nodes: 1'; do
    grep -q "^$header\$" "$tmp/out" || fail "missing header line '$header'"
done
grep -q '^# software: .*MPI' "$tmp/out" || fail "missing software header"
grep -q '^# command: collsim measure --backend mpi --op allreduce --algo ring' "$tmp/out" \
    || fail "missing command header"
# Column 9 is the out-of-place #wrong; column 10 onwards the in-place N/A half.
bad=$(awk '/^ *[0-9]/ && $9 != 0' "$tmp/out")
[ -z "$bad" ] || fail "rows with wrong elements: $bad"
na=$(awk '/^ *[0-9]/ && $13 != "N/A"' "$tmp/out")
[ -z "$na" ] || fail "in-place halves should be N/A: $na"

# 3 ranks (not a power of two), a rooted collective: the root column shows -r.
"$mpirun" "$@" -np 3 "$collsim" measure --backend mpi --op broadcast --algo tree -r 2 \
    -b 100 -e 100 -n 1 >"$tmp/out3" 2>"$tmp/err3"
status=$?
[ $status -eq 0 ] || fail "broadcast tree -np 3 exited $status: $(cat "$tmp/err3")"
root=$(awk '/^ *[0-9]/ {print $5}' "$tmp/out3")
[ "$root" = "2" ] || fail "root column: expected 2, got '$root'"

# Without mpirun the process is a world of one rank.
"$collsim" measure --backend mpi --op allgather --algo ring -b 64 -e 64 -n 1 >"$tmp/out1" 2>&1
status=$?
[ $status -eq 0 ] || fail "singleton run exited $status: $(cat "$tmp/out1")"
grep -q '^# ranks: 1$' "$tmp/out1" || fail "singleton run should report 1 rank"

# --output writes the trace to a file and nothing to stdout.
"$mpirun" "$@" -np 2 "$collsim" measure --backend mpi --op reducescatter --algo ring \
    -b 1K -e 1K -n 1 --output "$tmp/trace.txt" >"$tmp/out2" 2>"$tmp/err2"
status=$?
[ $status -eq 0 ] || fail "--output run exited $status: $(cat "$tmp/err2")"
[ -s "$tmp/out2" ] && fail "--output should leave stdout empty: $(cat "$tmp/out2")"
grep -q '^# collective: reduce_scatter$' "$tmp/trace.txt" || fail "--output file lacks the trace"

# Bad input: usage errors exit 2 with one line naming the problem.
"$collsim" measure --backend mpi --op allreduce >"$tmp/u1" 2>&1
[ $? -eq 2 ] || fail "missing --algo should exit 2"
grep -q -- '--algo is required' "$tmp/u1" || fail "missing --algo message: $(cat "$tmp/u1")"
"$collsim" measure --backend mpi --op allreduce --algo nosuch -b 8 -e 8 >"$tmp/u2" 2>&1
[ $? -eq 2 ] || fail "unknown algorithm should exit 2: $(cat "$tmp/u2")"
"$collsim" measure --backend mpi --op scatter --algo ring -b 8 -e 8 >"$tmp/u3" 2>&1
[ $? -eq 2 ] || fail "an algorithm without the collective should exit 2: $(cat "$tmp/u3")"
grep -q 'does not implement scatter' "$tmp/u3" || fail "unsupported message: $(cat "$tmp/u3")"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "all mpi measure checks passed"
exit 0
