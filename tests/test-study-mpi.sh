#!/bin/sh
# SPDX-License-Identifier: MIT
# A study under mpirun (issue 28, "beyond one machine"): `mpirun -np 3 collsim run|select|plan|
# validate ...` spreads the points over the ranks and prints byte for byte what one process
# prints (cmp), rank 0 alone printing and writing files; an error met on another rank is said
# once by rank 0 with the single process's exit status; a rank off the others' path (an input
# only it lacks) ends the job with one report instead of a hang.
# Usage: test-study-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]; exit 77 where mpirun cannot start.
set -u

collsim=$1
mpirun=$2
shift 2
src=${COLLSIM_SOURCE_ROOT:?COLLSIM_SOURCE_ROOT is the source tree}
failures=0

fail () {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$mpirun" "$@" -np 2 true >"$tmp/probe" 2>&1; then
    echo "SKIP: $mpirun cannot start 2 processes here: $(head -3 "$tmp/probe")"
    exit 77
fi

# Compares `collsim ARGS` alone and under `mpirun -np NP` (NAME NP ARGS...): the same stdout
# byte for byte, the same exit status, and stderr: the single process's lines, once.
same () {
    name=$1
    np=$2
    shift 2
    "$collsim" "$@" >"$tmp/$name.one" 2>"$tmp/$name.one.err"
    one=$?
    "$mpirun" $flags -np "$np" "$collsim" "$@" >"$tmp/$name.np" 2>"$tmp/$name.np.err"
    many=$?
    [ $many -eq $one ] || fail "$name: exit $many under -np $np, $one alone: $(head -5 "$tmp/$name.np.err")"
    cmp -s "$tmp/$name.one" "$tmp/$name.np" \
        || fail "$name: -np $np prints otherwise: $(diff "$tmp/$name.one" "$tmp/$name.np" | head -5)"
    [ -s "$tmp/$name.one" ] || [ $one -ne 0 ] || fail "$name: no output to compare"
    # Open MPI adds its own banner when a rank exits non-zero: look for our lines only.
    while IFS= read -r line; do
        n=$(grep -cxF -- "$line" "$tmp/$name.np.err")
        [ "$n" -eq 1 ] || fail "$name: stderr line '$line' printed $n times under -np $np"
    done <"$tmp/$name.one.err"
}

flags="$*"
wl="$src/examples/workloads/megatron-tp8-dp2.json"

same run-all-json 3 --topo dgx-h100x4 --op allreduce --all -e 64M --format json
same run-best-json-2n 3 --topo hgx-h100x8-2n --op allreduce -b 1G -e 8G --format json
same run-best-table-2n 3 --topo hgx-h100x8-2n --op allgather -e 256M
same run-jobs 2 --topo hgx-h100x8-2n --op allreduce -e 64M --jobs 2 --format csv
same run-np1 1 --topo dgx-h100x4 --op allreduce -e 1M
same select-table 3 select --topo dgx-h100x4 --op allreduce,allgather -e 64M
same select-json 3 select --topo dgx-h100x4 --op allreduce,allgather -e 64M --emit json
same select-tuner-csv 3 select --topo dgx-h100x4 --op allreduce,allgather -e 64M \
    --emit nccl-tuner-csv
same select-compare-2n 3 select --topo hgx-h100x8-2n --op allreduce -e 16M --compare nccl
same plan-table 3 plan --workload "$wl" --topo hgx-h100x8-2n --topo oci-h100x8-2n-roce \
    --set network.nic_bandwidth=400Gb/s,200Gb/s
same plan-json 3 plan --workload "$wl" --topo hgx-h100x8-2n \
    --set network.nic_bandwidth=400Gb/s,200Gb/s --format json
same validate 3 validate --topo aws-p4de-a100x8-2n-efa --model nccl \
    "$src/traces/a100-sxm4-80gb-8gpu-x2-efa-p4de-4x100g_allreduce_ncclunknown.txt" \
    "$src/traces/a100-sxm4-80gb-8gpu-nvswitch_allreduce_nccl2.19.3.txt"

# Errors. Before any point: every rank meets it, rank 0 says it.
same error-layout 3 plan --workload "$wl" --topo hgx-h100x8-2n --topo dgx-h100x4
same error-usage 3 --topo dgx-h100x4 --op nonsense
# In a point that rank 2 computes: sizes 1M, 8M, ..., 32G are items 0 to 5, and item 5 (32 GiB,
# 98,304 steps of 144 B) is beyond a 4 MiB memory budget; rank 0 reports it, exit 2.
export COLLSIM_MEMORY_LIMIT=4M
same error-on-rank-2 3 --topo dgx-h100x4 --op allreduce --algo ring --proto simple --exact \
    --whole -b 1M -e 64G -f 8
grep -q 'beyond the memory budget' "$tmp/error-on-rank-2.np.err" \
    || fail "error-on-rank-2: rank 2's error not reported: $(cat "$tmp/error-on-rank-2.np.err")"
unset COLLSIM_MEMORY_LIMIT

# The points are spread: rank 0 computes items 0, 3, 6, ... of the 18 sizes (8 B to 1 MiB).
G_MESSAGES_DEBUG=collsim "$mpirun" $flags -np 3 "$collsim" --topo dgx-h100x4 --op allreduce \
    -e 1M >"$tmp/debug" 2>&1
grep -q 'rank 0 of 3: 6 of 18 items' "$tmp/debug" \
    || fail "rank 0 should compute 6 of the 18 sizes: $(grep 'rank 0' "$tmp/debug" | head -3)"

# Output files: written once, by rank 0, the same bytes as one process writes.
"$collsim" select --topo dgx-h100x4 --op allreduce -e 1M --output "$tmp/one.txt" >/dev/null 2>&1
"$mpirun" $flags -np 3 "$collsim" select --topo dgx-h100x4 --op allreduce -e 1M \
    --output "$tmp/np.txt" >"$tmp/np.stdout" 2>"$tmp/np.stderr"
cmp -s "$tmp/one.txt" "$tmp/np.txt" || fail "--output under -np 3 differs from one process's"
[ -s "$tmp/np.stdout" ] && fail "--output under -np 3 printed on stdout: $(head -3 "$tmp/np.stdout")"

# Ranks off each other's path: rank 0 runs the study, ranks 1 and 2 cannot load their topology.
# One report from rank 0, the failing ranks' status, and no hang (timeout).
timeout 120 "$mpirun" $flags -np 1 "$collsim" --topo dgx-h100x4 --op allreduce --all : \
    -np 2 "$collsim" --topo nosuch --op allreduce >"$tmp/apart" 2>"$tmp/apart.err"
status=$?
[ $status -eq 2 ] || fail "ranks apart: exit $status, expected 2: $(head -5 "$tmp/apart.err")"
grep -q '^(rank 1) collsim: no topology named "nosuch"' "$tmp/apart.err" \
    || fail "ranks apart: rank 1's error not reported: $(head -5 "$tmp/apart.err")"
grep -q '^(rank 0) collsim: still in a loop' "$tmp/apart.err" \
    || fail "ranks apart: rank 0 should say it was still in a loop: $(head -5 "$tmp/apart.err")"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "all mpirun study checks passed"
exit 0
