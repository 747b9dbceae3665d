#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Teaching walk-through: the alpha + n*beta (Hockney) model, and why a latency-optimal tree
# wins small messages while a bandwidth-optimal ring wins large ones.
#
# It follows the tutorial in the collsim sources (seed 000, "Collective Communication for
# Multiple GPUs"): T = alpha + n*beta with alpha = 10 us and B = 900 GB/s on H100 NVLink, and its
# 6-GPU broadcast by minimum spanning tree (MST) against the ring. Every number printed below
# comes from collsim; nothing is typed in by hand.
#
# Run from the source tree after building:
#   COLLSIM=build/src/collsim examples/teaching-alpha-beta.sh
# Takes about a second.
set -euo pipefail

COLLSIM=${COLLSIM:-build/src/collsim}
if [[ ! -x $COLLSIM ]]; then
    echo "teaching-alpha-beta.sh: no collsim binary at '$COLLSIM' (build it, or set COLLSIM)" >&2
    exit 2
fi

# Prints a section title.
section() { printf '\n==== %s ====\n' "$*"; }
# Prints the command as a reader would type it, then runs it.
show() {
    printf '\n$ collsim %s\n' "$*"
    "$COLLSIM" "$@"
}

# One line per (algorithm, size) from `collsim explain`: protocol, rounds, predicted time and
# its split along the critical path (alpha = latency, beta = bytes at link speed,
# overhead = launch and per-step costs).
split_row() {
    local algo=$1 size=$2
    shift 2
    "$COLLSIM" explain --topo dgx-h100x8 --ranks 6 --op broadcast --algo "$algo" \
        --size "$size" "$@" |
        awk -v algo="$algo" -v size="$size" '
            /^Protocol /       { proto = $2; sub(",", "", proto); ch = $3 }
            /^Schedule:/       { rounds = $2 }
            /^Predicted time:/ { t = $3 }
            /^  alpha /        { a = $2; ap = $4 }
            /^  beta /         { b = $2; bp = $4 }
            /^  overhead /     { o = $2; op = $4 }
            END { printf "  %-6s %6s  %-6s %3s ch %7s rounds %13s us", algo, size, proto, ch,
                         rounds, t
                  printf "   alpha %11s us %6s   beta %12s us %6s   overhead %6s us %6s\n",
                         a, ap, b, bp, o, op }'
}

section "1. One link: T(n) = alpha + n*beta"
# The tutorial's H100 NVLink numbers. The half-performance size n_1/2 = alpha*B is where the
# fixed start-up cost equals the transfer time: below it a message is latency-bound (alpha
# dominates, so send fewer messages), above it bandwidth-bound (n*beta dominates, so keep the
# links busy). The tutorial's 1 KB message is in the first row and its 1 GB one in the last.
show model --alpha 10us --bandwidth 900GB/s -b 1K -e 1G -f 4

section "2. Broadcast from GPU 0 to 6 GPUs: MST against ring, 1 KiB"
# Six ranks of an 8 x H100 NVSwitch box (--ranks 6). One channel each, so both algorithms move
# one message at a time per GPU, as the textbook model assumes.
#
# The MST is the binomial tree: a GPU that has the data sends it to one GPU per round, so the
# number of GPUs holding it doubles every round: ceil(log2 6) = 3 rounds. (The tutorial's
# round 1, "GPU 0 sends to GPU 1 and 2", sends two messages at once, which its own
# one-message-at-a-time assumption does not allow; collsim's tree needs the same 3 rounds
# without that.) The ring passes the data along a chain: P-1 = 5 rounds for 6 GPUs (the
# tutorial's "N-1 = 3 rounds" counts 4 GPUs).
#
# explain also prints the algorithm's textbook closed form beside the engine's time. At 1 KiB
# they differ several-fold: most of the engine's time is the kernel launch (overhead) and the
# protocol's per-hop latency, which the closed form leaves out.
show explain --topo dgx-h100x8 --ranks 6 --op broadcast --algo mst --channels 1 --size 1K
show explain --topo dgx-h100x8 --ranks 6 --op broadcast --algo ring --channels 1 --size 1K

section "3. Where the time goes: small against large messages"
# The same two broadcasts at 1 KiB and at 1 GiB. At 1 KiB the time is start-up costs (alpha
# and overhead) and the tree wins by having fewer rounds. At 1 GiB the time is almost all beta:
# the tree's root sends the whole message ceil(log2 6) = 3 times, while the ring cuts it into
# chunks and pipelines them, so every GPU sends it about once: the ring wins by close to 3x.
echo
echo "  broadcast on 6 x H100, one channel, as collsim explain splits it:"
split_row mst 1K --channels 1
split_row ring 1K --channels 1
split_row mst 1G --channels 1
split_row ring 1G --channels 1
# A real ring does not stop at one channel: NCCL runs many in parallel (collsim picks the
# count NCCL would), each on its own NVLink lanes, which is what a bandwidth-bound message needs.
echo
echo "  the ring with the channel count NCCL would use:"
split_row ring 1G

section "4. Crossovers: where latency-optimal hands over to bandwidth-optimal"
# A classic teaching cluster: 8 CPU nodes on 10 Gb Ethernet, where alpha is large (tens of us
# per message), so the latency-optimal algorithms win up to much larger sizes than on NVLink.
# `collsim select` tries every algorithm x protocol at every size and finds, by bisection, the
# exact size where the best one changes (protocol changes count too: LL, LL128 and Simple
# trade latency for bandwidth the same way). Broadcast: binomial tree (mst) for small
# messages, pipelined tree and ring for large. All-reduce: recursive doubling (log2 P rounds,
# whole vector each round) for small messages, recursive halving-doubling (rhd, Rabenseifner)
# in between, then the ring (bandwidth-optimal); with one rank per node, hierarchical is an
# inter-node ring too, so the two trade places near their crossover.
printf '\n$ collsim select --topo eth-cpu-8n --op broadcast,allreduce -e 64M'
printf '   (crossovers and ranges)\n'
"$COLLSIM" select --topo eth-cpu-8n --op broadcast,allreduce -e 64M |
    awk '/^# [a-z]+: [0-9]+ candidates/ { print; next }
         /^# (crossovers|ranges):/        { keep = 1 }
         /^#$/ || /^# [a-z]+: [0-9]+ cand/ { keep = 0 }
         keep'

# Every algorithm side by side (`run --all`: one block per algorithm x protocol), best protocol
# per algorithm, from the CSV output. The latency-optimal ones lead in the first columns, the
# bandwidth-optimal ones in the last. All-pairs (every rank sends each peer its share at once,
# reduces its own, then sends the sum to every peer: RCCL runs it on 8 fully connected MI300X)
# leads almost everywhere: 2 rounds, and on a non-blocking switch a ring's bytes. That holds
# because the engine lets a rank's 7 messages leave back to back, paying alpha as latency; in
# the one-port textbook model (`--textbook`, each message pays alpha on its sender) it pays 14
# alphas and loses to recursive doubling's 3 (1 KiB: 312 against 69 us). No MPI library has it,
# which is why `select` on CPU ranks leaves it out (above).
printf '\n$ collsim run --topo eth-cpu-8n --op allreduce --all -b 1K -e 64M -f 16 --format csv'
printf '   (best protocol per algorithm, time in us)\n'
"$COLLSIM" run --topo eth-cpu-8n --op allreduce --all -b 1K -e 64M -f 16 --format csv |
    python3 -c "$(cat <<'PY'
import csv, sys
best = {}
sizes = []
for row in csv.DictReader(sys.stdin):
    size, algo, t = int(row["size"]), row["algo"], float(row["time_us"])
    if size not in sizes:
        sizes.append(size)
    if t < best.get((algo, size), float("inf")):
        best[(algo, size)] = t
algos = sorted({a for a, _ in best}, key=lambda a: best[(a, sizes[0])])
def label(n):
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return "%d%s" % (n // scale, unit)
    return str(n)
fastest = {s: min(algos, key=lambda a: best[(a, s)]) for s in sizes}
print("  %-20s" % "algorithm" + "".join("%12s" % label(s) for s in sizes))
for a in algos:
    cells = ["%11.1f%s" % (best[(a, s)], "*" if fastest[s] == a else " ") for s in sizes]
    print("  %-20s" % a + "".join(cells))
print("  (* the fastest at that size)")
PY
)"

# The network model matters once flows share links. The reservation model (default) gives a
# transfer its links in turn; maxmin shares each link fairly among the flows crossing it.
# The ranges move where contention differs between the two.
printf '\n$ collsim select --topo eth-cpu-8n --op allreduce -e 64M --model maxmin   (ranges)\n'
"$COLLSIM" select --topo eth-cpu-8n --op allreduce -e 64M --model maxmin | sed -n '/^# ranges:/,$p'

section "Summary"
echo "  n_1/2 = alpha * B separates latency-bound from bandwidth-bound messages (part 1)."
echo "  Fewer rounds win below it (MST, recursive doubling); pipelining and all links busy"
echo "  win above it (ring, Rabenseifner) (parts 2-4)."
