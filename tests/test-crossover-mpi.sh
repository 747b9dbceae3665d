#!/bin/sh
# SPDX-License-Identifier: MIT
# `collsim crossover --backend mpi` end to end on real MPI processes (issue 34): all-reduce on
# cpu-host-shm with 4 ranks, where select predicts two crossovers (recursive doubling -> rhd,
# rhd -> ring). Checks what does not depend on the machine's speed: every predicted crossover
# is reported, with a status the search can give; a measured one with its interval around the
# measured size and a ratio; the traces written (one per algorithm) read back by validate;
# --calibrate's re-prediction reported; the ranks other than 0 silent; an NVLS crossover listed
# as unmeasurable. Where the measured crossover lies, and whether the calibrated prediction
# moves toward it, are timings of a shared 2-core machine (4 busy-polling ranks): they are
# printed, not gated; tests/test-crossover.c asserts the direction on a simulated machine.
# Usage: test-crossover-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]
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

# A small budget: 3 to 4 samples of 5 iterations per side and size, at most 8 sizes each.
"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo cpu-host-shm --ranks 4 \
    -n 5 -w 2 --repeats 3,4 --max-points 8 --format csv --traces "$tmp/traces" --calibrate \
    >"$tmp/out.csv" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover -np 4 exited $status: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "stderr not empty: $(cat "$tmp/err")"
cat "$tmp/out.csv"

header=$(head -n 1 "$tmp/out.csv")
case $header in
collective,from,to,predicted_bytes,status,measured_bytes,lo_bytes,hi_bytes,ratio,*) ;;
*) fail "unexpected CSV header: $header" ;;
esac
rows=$(tail -n +2 "$tmp/out.csv" | grep -c .)
[ "$rows" -eq 2 ] || fail "expected 2 crossovers (one report line each, rank 0 only), got $rows"
grep -q '^all_reduce,recursive_doubling/Simple/1ch,rhd/Simple/1ch,6784,' "$tmp/out.csv" \
    || fail "missing the predicted recursive_doubling -> rhd crossover at 6784 B"
grep -q '^all_reduce,rhd/Simple/1ch,ring/Simple/2ch,65536,' "$tmp/out.csv" \
    || fail "missing the predicted rhd -> ring crossover at 65536 B"
# Fields: 5 status, 6 measured, 7 lo, 8 hi, 9 ratio, 10 noise, 16 samples, 17 points,
# 19 recalibrated bytes, 20 moved.
bad=$(tail -n +2 "$tmp/out.csv" | awk -F, '
    $5 !~ /^(measured|tie|from-throughout|to-throughout)$/ { print "status " $5; next }
    $16 < 6 || $17 < 1 || $17 > 8 { print "samples " $16 " points " $17; next }
    $10 == "" { print "no noise figure"; next }
    $5 == "measured" && !($7 + 0 < $6 + 0 && $6 + 0 <= $8 + 0) { print "interval " $7 " " $6 " " $8; next }
    $5 == "measured" && ($9 == "" || $20 !~ /^(toward|away|unmoved|gone)$/) { print "ratio/moved " $9 " " $20; next }
    $5 != "measured" && $6 != "" { print "a size for status " $5 }')
[ -z "$bad" ] || fail "malformed rows: $bad"

# One trace per algorithm measured, each read back by validate.
n=$(ls "$tmp/traces" | wc -l)
[ "$n" -eq 3 ] || fail "expected 3 traces (recursive_doubling, rhd, ring), got $n: $(ls "$tmp/traces")"
for t in "$tmp/traces"/*.txt; do
    grep -q '^# backend: mpi$' "$t" || fail "$t: no backend header"
    grep -q '^# command: collsim crossover --backend mpi' "$t" || fail "$t: no command header"
    grep -q '^# algo: ' "$t" || fail "$t: no algo header"
    "$collsim" validate --topo cpu-host-shm "$t" >"$tmp/validate" 2>&1 \
        || fail "validate $t: $(cat "$tmp/validate")"
done

# The table: the calibrated line for each crossover, from the same kind of run (one
# crossover only, --between, to keep it short).
"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo cpu-host-shm --ranks 4 \
    --between rhd,ring -n 5 -w 2 --repeats 3,3 --max-points 4 --calibrate >"$tmp/out.txt" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover --between exited $status: $(cat "$tmp/err")"
cat "$tmp/out.txt"
[ "$(grep -c -- '^[a-z].* -> ' "$tmp/out.txt")" -eq 1 ] || fail "--between rhd,ring: expected one crossover"
grep -q '^  calibrated  ' "$tmp/out.txt" || fail "--calibrate: no calibrated line"
grep -q '^# calibrated on the measurements: rms time error' "$tmp/out.txt" \
    || fail "--calibrate: no fit summary"

# NVLS cannot run on CPU processes: listed, nothing measured (no mpirun needed).
"$collsim" crossover --backend mpi --topo dgx-h100x8 --between nvls,ring --format json \
    >"$tmp/nvls.json" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "NVLS crossovers exited $status: $(cat "$tmp/err")"
grep -Eq '"status":[[:space:]]*"unmeasurable"' "$tmp/nvls.json" || fail "NVLS crossover not listed as unmeasurable"
grep -Eq '"why":[[:space:]]*"nvls/Simple/16ch: needs NVSwitch multicast' "$tmp/nvls.json" \
    || fail "NVLS crossover without its reason"
grep -Eq '"status":[[:space:]]*"measured"' "$tmp/nvls.json" && fail "an NVLS crossover was measured"
# Its schema (docs/formats.md, collsim-crossover), as tests/test-cli-json.c checks the others.
tr -d ' \t\n' <"$tmp/nvls.json" | grep -q '^{"schema":{"name":"collsim-crossover","version":1}' \
    || fail "the JSON does not start with its schema"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok"
