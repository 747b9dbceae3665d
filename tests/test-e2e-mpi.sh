#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole loop on real MPI processes (issue 6): measure traces with `collsim measure --backend
# mpi`, fit the shipped datasheet topology cpu-host-shm to them with `collsim calibrate`, then
# hold a second, separate measurement (another algorithm) against the fitted topology with
# `collsim validate --max-error`. The datasheet topology's error on the same trace is printed
# beside it, not gated, to show what calibration bought.
# Usage: test-e2e-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]
#
# What is measured, and why:
# - 2 ranks: CI machines have 2 cores, and MPI ranks busy-poll; with more ranks than cores a
#   rank waits whole scheduler time slices for its peer and the times measure the scheduler.
# - Sizes 1 KiB to 256 KiB: from the latency regime (2 steps of ~1 us) to ~5 GB/s of busbw.
#   Above ~1 MiB per message, shared-memory transfers on the 2-core VM this test was written on
#   drop to 0.2-1 GB/s with 10x spread between runs (a plain MPI_Sendrecv ping-pong, and TCP,
#   do the same), which no fixed model and no gate can follow.
# - Calibration set A: all-reduce, all-gather and reduce-scatter over ring (2 steps with a
#   reduction, 1 step without, 1 step with: latency, bandwidth and reduction rate separate).
#   Without reduce-scatter, all-reduce's time beyond twice all-gather's was all the fit had to
#   place the reduction; on the AMD EPYC VM of 2026-11-24 it put it at 0.8 GB/s (from 4) with
#   transfers 3x faster, and trace B, which reduces the whole vector in one step, came out
#   2-3x slow (three misses in a row). Validation trace B: all-reduce
#   by recursive doubling, measured in the same session but never shown to the fit: one step
#   carrying the whole vector instead of two carrying halves.
# - Each trace is measured RUNS times, interleaved A, B, A, B, ..., and each size keeps the row
#   of its fastest run (a header says so): on a shared machine a rank that loses its core for
#   a time slice inflates a row's mean several-fold, and a slow row is noise, a fast one is not.
# - The ranks run at raised priority (nice -10) where that is permitted (root), so that other
#   jobs on the machine (builds, other tests) do not take their cores; elsewhere at normal
#   priority, which is what a CI job that runs this test alone needs.
#
# MAX_ERROR, the gate on B's geometric-mean |busbw error| against the fitted topology: 30%.
# Measured while writing this test (2-core Xeon VM, Open MPI 4.1.4), 25 runs of this script:
# alone, beside other engineers' builds (load 2-4), beside two busy loops, as a user that may
# not raise its priority, and built with -Db_sanitize=address,undefined: calibrated 3.5% to
# 14.3% (mean 9.7%); the datasheet topology 41% to 46% on the same traces (47-60% under ASan).
# 30% is about twice the worst calibrated value seen, for machines and loads not tried, and
# still well below the datasheet's error, so the gate fails if calibration stops helping.
# See docs/measurements/cpu-mpi-e2e.md.
#
# Up to two retries: on 2026-11-23 the same VM was noisier (4 runs of this script: calibrated 11.4%,
# 22.1%, 34.8% and 48.6%; the collsim of 3a70651 and of that day fit and predict the same
# traces identically, so the spread is the measurements'). A missed gate therefore measures
# everything again, up to three attempts in all (a clean-clone run of 50f5c51 missed twice in a
# row: 41.8% on a noisy trace B), and gates the last; a calibration that stopped helping misses
# all three. Those runs calibrated by least squares; since commit e1b4fe1 calibrate's
# default is a Cauchy loss, which on eight attempts of 2026-11-23 gave the same mean error of
# trace B as least squares on the same measurements (22.3% and 22.7%; cpu-mpi-e2e.md).
set -u

collsim=$1
mpirun=$2
shift 2
# Open MPI's flags from meson (--allow-run-as-root --oversubscribe): single words.
mpirun_flags="$*"

MAX_ERROR=30
RUNS=5
SIZES="-b 1K -e 256K -f 2 -n 20 -w 5"
TOPO=cpu-host-shm

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

fail () {
    echo "FAIL: $*"
    exit 1
}

# Skip only when the launcher itself cannot start two processes here; from then on, any
# failure of collsim is a failure.
# shellcheck disable=SC2086
if ! "$mpirun" $mpirun_flags -np 2 true >"$tmp/probe" 2>&1; then
    echo "SKIP: '$mpirun -np 2 true' cannot start two processes: $(head -n 3 "$tmp/probe")"
    exit 77
fi

nice=""
here=$(nice)
if [ "$(nice -n -10 nice 2>/dev/null)" = "$((here - 10))" ]; then
    nice="nice -n -10"
fi
echo "# e2e: 2 MPI ranks, ${nice:-normal priority}, $RUNS runs per trace, sizes: $SIZES"

# measure NAME OP ALGO RUN: one measurement into $tmp/NAME.RUN.
measure () {
    # shellcheck disable=SC2086
    $nice "$mpirun" $mpirun_flags -np 2 "$collsim" measure --backend mpi --op "$2" --algo "$3" \
        $SIZES --output "$tmp/$1.$4" >"$tmp/out" 2>&1 \
        || fail "measure $2 $3 (run $4) exited $?: $(cat "$tmp/out")"
    rows=$(grep -c '^ *[0-9]' "$tmp/$1.$4")
    [ "$rows" -eq 9 ] || fail "$1 run $4: expected 9 rows (1K to 256K by 2), got $rows"
}

# fastest NAME: $tmp/NAME.txt, run 1's headers and, per size, the row of the fastest run
# (column 6, the out-of-place time). The per-run average busbw line would describe one run
# only and is dropped.
fastest () {
    awk -v runs="$RUNS" '
        FNR == 1 { file++; row = 0 }
        /^ *[0-9]/ {
            row++
            if (!(row in best) || $6 + 0 < time[row]) { best[row] = $0; time[row] = $6 + 0 }
            next
        }
        file > 1 || /^# Avg bus bandwidth/ { next }
        { head[++n] = $0 }
        /^# iterations:/ { head[++n] = "# selection: per size, the fastest of " runs " runs" }
        /^# *\(B\)/ { columns = n }
        END {
            for (i = 1; i <= columns; i++) print head[i]
            for (r = 1; r <= row; r++) print best[r]
            for (i = columns + 1; i <= n; i++) print head[i]
        }' "$tmp/$1".[0-9]* >"$tmp/$1.txt"
}

# attempt N: measure, calibrate on A, validate B; returns validate's gate status.
attempt () {
    rm -f "$tmp"/A-* "$tmp"/B-*
    run=1
    while [ $run -le $RUNS ]; do
        measure A-allreduce-ring allreduce ring $run
        measure A-allgather-ring allgather ring $run
        measure A-reducescatter-ring reducescatter ring $run
        measure B-allreduce-rd allreduce recursive_doubling $run
        run=$((run + 1))
    done
    for t in A-allreduce-ring A-allgather-ring A-reducescatter-ring B-allreduce-rd; do
        fastest $t
    done
    echo "# e2e: measured in $(($(date +%s) - start)) s"
    echo
    echo "# ---- validation trace B (never shown to the fit) ----"
    cat "$tmp/B-allreduce-rd.txt"
    echo

    echo "# ---- calibrate $TOPO from A ----"
    "$collsim" calibrate --topo "$TOPO" "$tmp/A-allreduce-ring.txt" "$tmp/A-allgather-ring.txt" \
        "$tmp/A-reducescatter-ring.txt" \
        -o "$tmp/calibrated.json" >"$tmp/cal.out" 2>&1
    status=$?
    cat "$tmp/cal.out"
    [ $status -eq 0 ] || fail "calibrate exited $status"
    grep -q '"calibrated_from"' "$tmp/calibrated.json" || fail "calibrated topology lacks calibrated_from"
    grep -q 'A-allreduce-ring.txt' "$tmp/calibrated.json" || fail "calibrated_from does not name trace A"
    echo

    echo "# ---- validate B against the datasheet topology (reported, not gated) ----"
    "$collsim" validate --topo "$TOPO" "$tmp/B-allreduce-rd.txt" >"$tmp/datasheet.out" 2>&1
    status=$?
    cat "$tmp/datasheet.out"
    [ $status -eq 0 ] || fail "validate against $TOPO exited $status"

    echo "# ---- validate B against the calibrated topology, --max-error $MAX_ERROR ----"
    "$collsim" validate --topo "$tmp/calibrated.json" "$tmp/B-allreduce-rd.txt" \
        --max-error "$MAX_ERROR" >"$tmp/calibrated.out" 2>&1
    status=$?
    cat "$tmp/calibrated.out"

    datasheet=$(awk '/# *all sizes:/ { print $4 }' "$tmp/datasheet.out")
    calibrated=$(awk '/# *all sizes:/ { print $4 }' "$tmp/calibrated.out")
    echo "# e2e summary, attempt $1: trace B (allreduce, recursive_doubling, 2 ranks, 1K-256K)," \
         "geometric-mean |busbw error|: datasheet $TOPO ${datasheet:-?}, calibrated from A" \
         "${calibrated:-?}, gate ${MAX_ERROR}% ($(($(date +%s) - start)) s)"
    return $status
}

attempt 1
status=$?
for n in 2 3; do
    [ $status -eq 1 ] || break
    echo "# e2e: attempt $((n - 1)) missed the gate; measuring everything again (see the header)"
    echo
    attempt $n
    status=$?
done
[ $status -eq 0 ] || fail "validate against the calibrated topology exited $status (gate ${MAX_ERROR}%)"
echo "e2e loop passed"
exit 0
