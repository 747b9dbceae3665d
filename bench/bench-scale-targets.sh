#!/bin/bash
# SPDX-License-Identifier: MIT
# Issue 28's workloads, each run as a user runs it and timed with /usr/bin/time, printed beside
# the issue's target: wall time, CPU time (user + system), peak resident memory, and whether
# the target is met. One line per workload; the last line counts them. Long: the 1,024-GPU
# sweep takes minutes on two cores. Exit status 0 whatever is met (a benchmark measures, it
# does not gate); 1 when a command fails.
#
# Usage: bench-scale-targets.sh COLLSIM BENCH_ENGINE [--quick]
#   --quick: only the workloads that take seconds (no 1,024-GPU sweep, no 131,072-GPU sweep,
#            no select on 128 GPUs)
set -u
collsim=${1:?usage: bench-scale-targets.sh COLLSIM BENCH_ENGINE [--quick]}
bench_engine=${2:?usage: bench-scale-targets.sh COLLSIM BENCH_ENGINE [--quick]}
quick=${3:-}
command -v /usr/bin/time > /dev/null || {
    echo "bench-scale-targets: /usr/bin/time is missing (Debian: apt-get install time)" >&2
    exit 77
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
met=0
missed=0
failed=0

# run NAME TARGET_S TARGET_MIB TIMEOUT_S COMMAND...: one line (TARGET_MIB -: the issue sets none).
run() {
    local name=$1 target_s=$2 target_mib=$3 limit=$4
    shift 4
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" timeout "$limit" "$@" > "$work/out" 2> "$work/err"
    local status=$?
    local wall user sys rss
    read -r wall user sys rss < <(tail -n 1 "$work/time")
    local mib=$((rss / 1024))
    local cpu
    cpu=$(echo "$user + $sys" | bc)
    local verdict
    if [ "$status" = 124 ]; then
        verdict="not met (stopped after ${limit} s)"
        missed=$((missed + 1))
    elif [ "$status" != 0 ]; then
        verdict="FAILED (exit $status: $(tail -n 1 "$work/err"))"
        failed=$((failed + 1))
    elif [ "$(echo "$wall < $target_s" | bc)" = 1 ] \
        && { [ "$target_mib" = - ] || [ "$mib" -lt "$target_mib" ]; }; then
        verdict="met"
        met=$((met + 1))
    else
        verdict="not met"
        missed=$((missed + 1))
    fi
    local target="< $target_s s"
    [ "$target_mib" = - ] || target="$target, < $target_mib MiB"
    printf '%-58s %9.2f s wall %9.2f s CPU %7d MiB   target %s: %s\n' \
        "$name" "$wall" "$cpu" "$mib" "$target" "$verdict"
}

echo "issue 28 workloads ($(nproc) cores; wall, CPU = user + system, peak RSS)"
run "ring all-reduce, 4,096-rank star, 1 MiB, 1 channel" 0.5 256 600 \
    "$bench_engine" star4096
run "one size on 256 GPUs: 64 MiB (hgx-h100x8-32n)" 0.5 - 600 \
    "$collsim" --topo hgx-h100x8-32n -b 64M -e 64M --quiet
run "one size on 256 GPUs: 1 GiB (hgx-h100x8-32n)" 0.5 - 600 \
    "$collsim" --topo hgx-h100x8-32n -b 1G -e 1G --quiet
if [ "$quick" != --quick ]; then
    run "select --op all on 128 GPUs (hgx-h100x8-16n)" 10 - 1200 \
        "$collsim" select --topo hgx-h100x8-16n --op all --quiet
    run "all-reduce 8 B - 8 GiB on 1,024 GPUs (hgx-h100x8-128n)" 2 512 1200 \
        "$collsim" --topo hgx-h100x8-128n --op allreduce --quiet
    run "all-reduce 8 B - 8 GiB on 131,072 GPUs (nodes=16384)" 30 4096 120 \
        "$collsim" --topo hgx-h100x8-128n --set nodes=16384 --op allreduce --quiet
fi
# The engine's rate on the ring1024 benchmark (target: 20 M events/s).
"$bench_engine" ring1024 > "$work/ring" 2>&1 || failed=$((failed + 1))
rate=$(sed -n 's/.* \([0-9.]*\) M events\/s.*/\1/p' "$work/ring" | head -n 1)
if [ -n "$rate" ] && [ "$(echo "$rate >= 20" | bc)" = 1 ]; then
    verdict=met
    met=$((met + 1))
else
    verdict="not met"
    missed=$((missed + 1))
fi
printf '%-58s %9s M events/s (set-up included)   target >= 20 M events/s: %s\n' \
    "engine rate, ring1024 (bench-engine)" "${rate:-?}" "$verdict"
echo "$met met, $missed not met, $failed failed"
[ "$failed" = 0 ]
