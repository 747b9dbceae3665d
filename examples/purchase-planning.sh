#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Purchase planning in one command (issue 29's question): a 70B model trained data-parallel on
# 256 GPUs all-reduces its bf16 gradients in 1 GiB buckets every step. Is 8 x 400 Gb/s per
# node worth it over 4 x 400 Gb/s, and how much of a step is all-reduce? The workload,
# examples/workloads/dp-70b-256gpu.json, cites where each of its figures comes from.
#
#   COLLSIM=build/src/collsim examples/purchase-planning.sh [PRICE_8NIC PRICE_4NIC]
#
# Prices are yours (a quote, e.g. 3.00/gpu-hour 2.80/gpu-hour, or AMOUNT/node-hour); with them
# the plan adds cost per step, per run and steps per unit of currency. collsim ships none.
# Takes about 20 s of CPU: docs/workloads.md says where the time goes.
set -euo pipefail
COLLSIM=${COLLSIM:-build/src/collsim}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prices=()
if [[ $# -eq 2 ]]; then
    prices=(--price "$1" --price "$2")
fi

# Both candidates, each with what binds its GPUs' way out, the all-reduces' time and busbw,
# and how much of the backward pass they leave exposed.
"$COLLSIM" plan --workload "$root/examples/workloads/dp-70b-256gpu.json" \
    --topo hgx-h100x8-32n --set network.nics_per_node=8,4 ${prices[@]+"${prices[@]}"}

# How far to trust it: the same machine's model against a measured 2-node nccl-tests trace.
"$COLLSIM" validate --topo hgx-h100x8-2n \
    "$root/traces/h100-sxm-8gpu-x2-ib-ndr8x400g_allreduce_nccl2.26.2.txt" | grep '^#   '
