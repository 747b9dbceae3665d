#!/bin/bash
# SPDX-License-Identifier: MIT
# A study over mpirun's ranks (issue 28): one `collsim run --all` sweep (every algorithm x
# protocol, 8 B - 8 GiB, on 2 x 8 H100 over InfiniBand: 744 points) under mpirun -np 1 and
# -np 2, --jobs 1 so the ranks are the only parallelism; prints the wall and CPU time of each
# run, alternating, and the CPU time of its busiest rank (with a core per rank, the wall time
# it bounds on an idle machine: a loaded one stretches the wall times), and checks that both
# print the same bytes.
#
# Usage: bench-study-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]   (RUNS=3 by default)
set -uo pipefail

collsim=${1:?usage: bench-study-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]}
mpirun=${2:?usage: bench-study-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]}
shift 2
runs=${RUNS:-3}
study=(--topo hgx-h100x8-2n --op allreduce --all -e 8G --jobs 1 --quiet)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$mpirun" "$@" -np 2 true >"$tmp/probe" 2>&1; then
    echo "bench-study-mpi: $mpirun cannot start 2 processes here; skipped"
    exit 77
fi

echo "study: collsim ${study[*]}"
for ((i = 1; i <= runs; i++)); do
    for np in 1 2; do
        # TIMEFORMAT: wall, then user + sys of mpirun and every rank it waited for.
        TIMEFORMAT="%R %U %S"
        # Each rank's own user + sys in $tmp/cpu.RANK (the launcher's rank variable).
        rm -f "$tmp"/cpu.*
        t=$({ time "$mpirun" "$@" -np $np bash -c 'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
                TIMEFORMAT="%U %S"; { time "$@" 2>&3; } 3>&2 2>"$0.$r"' \
                "$tmp/cpu" "$collsim" "${study[@]}" >"$tmp/np$np.out" 2>"$tmp/np$np.err"; } 2>&1)
        read -r wall user sys <<<"$t"
        cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
        busiest=$(cat "$tmp"/cpu.* | awk '{ c = $1 + $2; if (c > m) m = c } END { printf "%.2f", m }')
        echo "run $i: -np $np: wall $wall s, CPU (all ranks) $cpu s, busiest rank $busiest s"
        if [ ! -s "$tmp/np$np.out" ]; then
            echo "bench-study-mpi: -np $np printed nothing: $(head -3 "$tmp/np$np.err")"
            exit 1
        fi
    done
    cmp -s "$tmp/np1.out" "$tmp/np2.out" || { echo "bench-study-mpi: -np 2 prints otherwise"; exit 1; }
done
echo "same output for -np 1 and -np 2 ($(wc -l <"$tmp/np1.out") lines); load: $(cut -d' ' -f1-3 /proc/loadavg)"
