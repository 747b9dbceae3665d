#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the walk-throughs in examples/ with COLLSIM set to the built binary: each must exit 0
# and print its key lines. Usage: test-examples.sh [SCRIPT...] (default: every script), with
# COLLSIM_BIN (the collsim binary) and COLLSIM_SOURCE_ROOT (the source tree) in the
# environment, as tests/meson.build sets them.
set -u

collsim=${COLLSIM_BIN:?COLLSIM_BIN must name the collsim binary}
src=${COLLSIM_SOURCE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs examples/$1 (more arguments passed on) into $tmp/$1.out; fails on a non-zero exit.
run_example() {
    local name=$1
    shift
    echo "# running examples/$name"
    COLLSIM=$collsim TMPDIR=$tmp "$src/examples/$name" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local status=$?
    if [ $status -ne 0 ]; then
        fail "examples/$name exited $status; its last lines:"
        tail -n 20 "$tmp/$name.out" "$tmp/$name.err"
        return 1
    fi
    return 0
}

# Fails unless the output of examples/$1 has a line matching the extended regex $2.
expect() {
    grep -Eq -- "$2" "$tmp/$1.out" || fail "examples/$1: no line matching '$2'"
}

check_teaching() {
    local s=teaching-alpha-beta.sh
    run_example $s || return
    # n_1/2 = alpha * B = 10e-6 s * 900e9 B/s = 9,000,000 B.
    expect $s 'n_1/2 = alpha \* B = 9000000 B'
    # Broadcast on 6 ranks, 1 KiB, one chunk: the binomial tree needs ceil(log2 6) = 3 rounds,
    # the ring P-1 = 5; each sends P-1 = 5 messages.
    expect $s '^Schedule: 3 rounds, 5 transfers'
    expect $s '^Schedule: 5 rounds, 5 transfers'
    # The split rows (algorithm, size, protocol, channels, "ch", rounds, "rounds", time): the
    # tree wins at 1 KiB (fewer rounds), the ring at 1 GiB (the tree's root sends the whole
    # message 3 times, the ring pipelines).
    local mst1k ring1k mst1g ring1g
    mst1k=$(awk '$1 == "mst" && $2 == "1K" { print $8; exit }' "$tmp/$s.out")
    ring1k=$(awk '$1 == "ring" && $2 == "1K" { print $8; exit }' "$tmp/$s.out")
    mst1g=$(awk '$1 == "mst" && $2 == "1G" { print $8; exit }' "$tmp/$s.out")
    ring1g=$(awk '$1 == "ring" && $2 == "1G" { print $8; exit }' "$tmp/$s.out")
    awk -v a="$mst1k" -v b="$ring1k" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' ||
        fail "$s: at 1 KiB the tree ($mst1k us) should beat the ring ($ring1k us)"
    awk -v a="$ring1g" -v b="$mst1g" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }' ||
        fail "$s: at 1 GiB the ring ($ring1g us) should beat the tree ($mst1g us)"
    # Crossovers on the Ethernet cluster: recursive doubling is the small-message all-reduce
    # among what an MPI library runs; in the side-by-side table all-pairs (2 rounds, no MPI
    # library's) is the fastest at 1 KiB and the ring at 64 MiB.
    expect $s '^# +0 - [0-9]+ +recursive_doubling/'
    expect $s '^  allpairs +[0-9.]+\*'
    expect $s '^  ring +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\*'
}

check_purchase() {
    local s=purchase-planning.sh
    # Prices are the caller's inputs: these two are test values, not claims.
    run_example $s 3.00/gpu-hour 2.80/gpu-hour || return
    # One plan, two candidates: 8 and 4 NICs per node, 256 GPUs each.
    expect $s '^## hgx-h100x8-32n \[network\.nics_per_node=8\] \(256 ranks\): step [0-9.]+ us$'
    expect $s '^## hgx-h100x8-32n \[network\.nics_per_node=4\] \(256 ranks\): step [0-9.]+ us, [0-9.]+x the first$'
    # What binds: the PCIe link in front of each NIC; two GPUs on each NIC with 4.
    expect $s '^# bottleneck: ranks 0-255: NIC 50\.0 GB/s behind PCIe 48\.0 GB/s: the PCIe link binds'
    expect $s '^# bottleneck: ranks 0-255: NIC 50\.0 GB/s shared by 2 GPUs \(25\.0 GB/s each\)'
    # The prices given: 3 x 256 and 2.8 x 256 per hour, and the run's cost.
    expect $s '^# cost: 3 per GPU-hour x 256 GPUs = 768 per hour; [0-9.]+ per step, [0-9.e+]+ per run of 476837 steps'
    expect $s '^# cost: 2\.8 per GPU-hour x 256 GPUs = 716\.8 per hour; .*x the first.s cost per step$'
    # The gradient all-reduces, and the backward pass they overlap.
    expect $s '^  backward +allreduce +dp +256 +1073741824 +130 '
    expect $s '^  backward +[0-9.]+ +11590000\.00 +[0-9.]+ +[0-9.]+$'
    # How far to trust it: validate's summary by regime.
    expect $s '^#   bandwidth \(>= 64 MiB\): +[0-9.]+% geomean'
}

check_tuning() {
    local s=nccl-tuning.sh out=$tmp/tuning
    # On the 4-GPU box: the same steps at half the cost of the default 8-GPU one (the
    # selections dominate, and a sanitizer build runs them several times slower).
    TOPO=dgx-h100x4 run_example $s "$out" || return
    [ -s "$out/nccl_tuner.conf" ] || fail "$s: no $out/nccl_tuner.conf"
    [ -s "$out/table.json" ] || fail "$s: no $out/table.json"
    grep -q '^export NCCL_ALGO=' "$out/nccl-env.sh" 2>/dev/null ||
        fail "$s: nccl-env.sh has no NCCL_ALGO line"
    # NCCL's example tuner CSV: 10 columns, nNodes 1 and nRanks 4 on dgx-h100x4.
    grep -q '^allreduce,0,[0-9]*,[a-z_]*,[a-z0-9]*,[0-9-]*,1,4,' "$out/nccl_tuner.conf" ||
        fail "$s: no all-reduce row from 0 B for 1 node, 4 ranks in nccl_tuner.conf"
    expect $s '^  [0-9]+ ranges, identical in nccl_tuner.conf and table.json'
    # Either the plugin answered for every asked size, or the script said why it could not.
    expect $s '^  (plugin collsim \(|.*libnccl-tuner-collsim.so is not built|python3 cannot load )'
    expect $s '^# worst loss of NCCL.s pick: '
    expect $s "COLLSIM_TUNER_FILE=$out/table.json"
    expect $s "NCCL_TUNER_CONFIG_FILE=$out/nccl_tuner.conf"
}

check_calibrate() {
    local s=validate-and-calibrate.sh out=$tmp/calibrate
    run_example $s "$out" || return
    local f
    for f in dgx-h100x4-fit-all.json dgx-h100x4-fit-pinned.json; do
        grep -q '"calibrated_from"' "$out/$f" 2>/dev/null ||
            fail "$s: $out/$f is not a calibrated topology"
    done
    expect $s 'pinned down$'
    expect $s '^  datasheet +[0-9.]+%'
    expect $s '^  fit: pinned-down only +[0-9.]+%'
}

scripts=("$@")
[ ${#scripts[@]} -gt 0 ] ||
    scripts=(teaching-alpha-beta.sh purchase-planning.sh nccl-tuning.sh validate-and-calibrate.sh)
for s in "${scripts[@]}"; do
    case $s in
    teaching-alpha-beta.sh) check_teaching ;;
    purchase-planning.sh) check_purchase ;;
    nccl-tuning.sh) check_tuning ;;
    validate-and-calibrate.sh) check_calibrate ;;
    *) fail "unknown example '$s'" ;;
    esac
done

# Every script in examples/ must be one this test knows.
for f in "$src"/examples/*.sh; do
    case $(basename "$f") in
    teaching-alpha-beta.sh | purchase-planning.sh | nccl-tuning.sh | validate-and-calibrate.sh) ;;
    *) fail "examples/$(basename "$f") is not run by tests/test-examples.sh" ;;
    esac
done

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok: ${scripts[*]}"
