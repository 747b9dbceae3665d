#!/bin/bash
# SPDX-License-Identifier: MIT
# The peer race of issue 28: ring all-reduce on the same star, simulated by collsim in textbook
# mode (--textbook: Hockney's alpha + n/B per message) and by SimGrid's SMPI running the same
# textbook ring as an MPI program (bench/smpi-ring.c); prints both predicted times beside the
# closed form 2(P-1) alpha + 2(P-1)/P n/B and the ratio of the wall times.
#
# The star: P hosts, each on its own full-duplex link of B = 50 GB/s and 0.5 us to one switch,
# so a route host -> switch -> host has alpha = 1 us and B = 50 GB/s. SMPI gets it as a
# <cluster> without backbone (SPLITDUPLEX links: a host sends and receives at once, as in
# collsim), with SimGrid's plain CM02 model: no latency or bandwidth correction factors, no TCP
# window, no cross traffic, no computation. collsim gets the same star as a JSON topology
# (reductions at 10^18 B/s: gamma adds 1 ps per step, which the SMPI program does not do).
#
# Usage: bench-smpi-ring.sh COLLSIM SMPI_RING_C [RANKS [BYTES]]   (defaults 1024 ranks, 1 GiB)
# Needs smpicc and smpirun (Debian: libsimgrid-dev); exits 77 (skipped) without them.
set -euo pipefail

collsim=${1:?usage: bench-smpi-ring.sh COLLSIM SMPI_RING_C [RANKS [BYTES]]}
source_c=${2:?usage: bench-smpi-ring.sh COLLSIM SMPI_RING_C [RANKS [BYTES]]}
p=${3:-1024}
n=${4:-1073741824}
alpha_link_us=0.5
bw_GBps=50

if ! command -v smpicc > /dev/null || ! command -v smpirun > /dev/null; then
    echo "bench-smpi-ring: smpicc/smpirun not found (Debian: libsimgrid-dev); skipped"
    exit 77
fi
if ((p < 2 || n % p != 0)); then
    echo "bench-smpi-ring: $n bytes do not split into $p blocks" >&2
    exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- The star, twice ----
{
    echo "<?xml version='1.0'?>"
    echo '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
    echo '<platform version="4.1">'
    echo "  <cluster id=\"star\" prefix=\"h\" suffix=\"\" radical=\"0-$((p - 1))\" speed=\"1Gf\"" \
        "bw=\"${bw_GBps}GBps\" lat=\"${alpha_link_us}us\" sharing_policy=\"SPLITDUPLEX\"/>"
    echo '</platform>'
} > "$work/star.xml"
seq 0 $((p - 1)) | sed 's/^/h/' > "$work/hosts"
{
    printf '{"name": "star%d", "description": "bench-smpi-ring: %d ranks on one switch",' "$p" "$p"
    printf ' "gpu": {"launch": "0 us", "step_overhead": "0 us",'
    printf ' "reduce_bandwidth": "1000000 TB/s", "copy_bandwidth": "1000000 TB/s"},'
    printf ' "devices": ['
    for ((i = 0; i < p; i++)); do printf '{"name": "h%d", "kind": "gpu"}, ' "$i"; done
    printf '{"name": "sw", "kind": "switch"}], "links": ['
    for ((i = 0; i < p; i++)); do
        ((i > 0)) && printf ', '
        printf '{"endpoints": ["h%d", "sw"], "kind": "ib", "bandwidth": "%s GB/s", "alpha": "%s us"}' \
            "$i" "$bw_GBps" "$alpha_link_us"
    done
    printf ']}\n'
} > "$work/star.json"

now() { date +%s.%N; }

# ---- collsim ----
# Twice: every rank replayed (--whole), and by default, where the star and the ring repeat
# from rank to rank, one rank replayed for all (engine.c "Symmetry": the same time).
tw0=$(now)
"$collsim" --topo "$work/star.json" --op allreduce --algo ring --proto Simple --textbook \
    -b "$n" -e "$n" --format csv --whole > "$work/collsim-whole.csv"
tw1=$(now)
t0=$(now)
"$collsim" --topo "$work/star.json" --op allreduce --algo ring --proto Simple --textbook \
    -b "$n" -e "$n" --format csv > "$work/collsim.csv"
t1=$(now)
collsim_us=$(awk -F, 'NR == 2 { print $10 }' "$work/collsim.csv")
whole_us=$(awk -F, 'NR == 2 { print $10 }' "$work/collsim-whole.csv")

# ---- SMPI ----
smpicc -O2 -o "$work/smpi-ring" "$source_c"
t2=$(now)
(cd "$work" && smpirun -np "$p" -platform star.xml -hostfile hosts \
    --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 \
    --cfg=network/crosstraffic:0 --log=root.thres:warning ./smpi-ring "$n" > smpi.out 2> smpi.err) || {
    cat "$work/smpi.err" >&2
    exit 1
}
t3=$(now)
smpi_s=$(awk '/^smpi_time_s/ { print $2 }' "$work/smpi.out")

# ---- Report ----
awk -v p="$p" -v n="$n" -v a="$alpha_link_us" -v bw="$bw_GBps" -v c_us="$collsim_us" \
    -v w_us="$whole_us" -v w_wall="$(echo "$tw1 - $tw0" | bc)" \
    -v s_s="$smpi_s" -v c_wall="$(echo "$t1 - $t0" | bc)" -v s_wall="$(echo "$t3 - $t2" | bc)" \
    -v smpi_version="$(smpirun -version 2>&1 | head -1)" 'BEGIN {
    alpha = 2 * a * 1e-6; B = bw * 1e9
    form = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n / B
    c = c_us * 1e-6
    printf "ring all-reduce, %d ranks x %d B, star of %s GB/s links, alpha %g us per route\n", p, n, bw, alpha * 1e6
    printf "  closed form 2(P-1)a + 2(P-1)/P n/B: %.3f us\n", form * 1e6
    w = w_us * 1e-6
    printf "  collsim --textbook --whole (every rank replayed): %.3f us (%+.2e relative), wall %.3f s\n", w * 1e6, (w - form) / form, w_wall
    printf "  collsim --textbook (one rank replayed for all): %.3f us (%+.2e relative), wall %.3f s\n", c * 1e6, (c - form) / form, c_wall
    printf "  SMPI (%s): %.3f us (%+.2e relative), wall %.3f s\n", smpi_version, s_s * 1e6, (s_s - form) / form, s_wall
    printf "  wall time SMPI / collsim --whole: %.1fx; SMPI / collsim: %.1fx\n", s_wall / w_wall, s_wall / c_wall
}'
