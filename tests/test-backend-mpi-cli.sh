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

# Row by row: a run killed (SIGKILL, no chance to clean up) once 2 rows are out keeps them: on
# stdout headers, titles and every finished row, and in --output a whole trace (footer too),
# replaced after each row, that validate reads. 1 MiB ... 64 MiB x 1000 iterations takes far
# longer than the first two rows (1 and 2 MiB), so the kill lands mid-run. Rows printed only at the end would leave stdout empty here. One process
# (an MPI singleton), so the kill leaves no rank behind.
# $1: a file the rows appear in; the command follows.
kill_after_two_rows () {
    watch=$1
    shift
    "$@" &
    pid=$!
    i=0
    while [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do
        [ -f "$watch" ] && [ "$(grep -c '^ *[0-9]' "$watch")" -ge 2 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    # Still running with two rows out: they were written as measured. Printed only at the end,
    # they would show once the run is over (about 25 s after the second row was measured).
    kill -0 $pid 2>/dev/null || fail "$watch: the run ended before two rows showed"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
}
kill_after_two_rows "$tmp/partial.out" sh -c 'exec "$0" "$@" >"'"$tmp"'/partial.out" 2>/dev/null' \
    "$collsim" measure --backend mpi --op allreduce --algo ring -b 1M -e 64M -n 1000 -w 0
rows=$(grep -c '^ *[0-9]' "$tmp/partial.out")
# Between 2 and 6 of the 7 sizes: the kill cut the sweep, and the rows before it are out.
[ "$rows" -ge 2 ] && [ "$rows" -lt 7 ] || fail "killed run: expected 2 to 6 rows on stdout, got $rows"
grep -q '^# collective: all_reduce$' "$tmp/partial.out" || fail "killed run: stdout lacks its headers"
grep -q '^#       size' "$tmp/partial.out" || fail "killed run: stdout lacks the column titles"
first=$(awk '/^ *[0-9]/ {print $1; exit}' "$tmp/partial.out")
[ "$first" = "1048576" ] || fail "killed run: first row size $first, expected 1048576"

kill_after_two_rows "$tmp/partial.txt" "$collsim" measure --backend mpi --op allreduce --algo ring \
    -b 1M -e 64M -n 1000 -w 0 --output "$tmp/partial.txt"
rows=$(grep -c '^ *[0-9]' "$tmp/partial.txt")
[ "$rows" -ge 2 ] && [ "$rows" -lt 7 ] || fail "killed run: expected 2 to 6 rows in --output, got $rows"
grep -q '^# Avg bus bandwidth' "$tmp/partial.txt" || fail "killed run: --output lacks the footer"
"$collsim" validate --topo cpu-host-shm "$tmp/partial.txt" >"$tmp/partial.val" 2>&1 \
    || fail "killed run: validate cannot read the --output trace: $(cat "$tmp/partial.val")"

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
