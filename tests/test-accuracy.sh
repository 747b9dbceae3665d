#!/usr/bin/env bash
# The accuracy gate on the shipped traces (fixed data), at the thresholds docs/accuracy.md states:
# `collsim validate --max-error PCT` fails when a trace's geometric-mean |busbw error| with the
# DATASHEET topology exceeds PCT. Traces within the 15% single-node goal are gated at 15%;
# the known misses (docs/accuracy.md, "Where collsim misses") are gated at their stated ceiling, so they
# cannot get worse unnoticed. The 2-node H100 InfiniBand traces are gated at the 25% multi-node
# goal; the EFA, RoCE, TCPX(O) and 2-rack GB200 traces at their measured error rounded up to the
# next 5%, the traces added since (SHARP, MI355X) a little above what they measure
# (docs/accuracy-multinode.md). A ceiling is a regression gate, not a claim of accuracy.
# The one-rack and 20-rack
# GB200 traces take too long to validate here and are measured by
# scripts/accuracy.py instead.
set -u
collsim=${1:?usage: test-accuracy.sh COLLSIM SOURCE_ROOT}
root=${2:?usage: test-accuracy.sh COLLSIM SOURCE_ROOT}
cd "$root" || exit 1

# trace, topology, ceiling (percent)
cases=(
    "h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt dgx-h100x4 15"
    "h100-sxm-8gpu-nvswitch_allreduce_ring_nccl2.26.2.txt dgx-h100x8 15"
    "h100-sxm-8gpu-nvswitch_allreduce_default-nvls_nccl2.26.2.txt dgx-h100x8 15"
    "h100-sxm-8gpu-nvswitch_allgather_ring_nccl2.26.2.txt dgx-h100x8 15"
    "h100-sxm-8gpu-nvswitch_allgather_default-nvls_nccl2.26.2.txt dgx-h100x8 15"
    "h100-sxm-8gpu-nvswitch_reducescatter_ring_nccl2.26.2.txt dgx-h100x8 15"
    "h100-sxm-8gpu-nvswitch_reducescatter_default-nvls_nccl2.26.2.txt dgx-h100x8 15"
    # MI300X, one process per GPU: 16.5% since RCCL's MSCCL all-pairs files run 1 KiB - 16 MiB
    # (allpairs.c; 10.0% under the ring RCCL's tuning model picks): the knee rows come closer
    # (512 KiB - 16 MiB within -39% .. +10% in time, ring -4% .. +117%), the LL rows 1 - 256 KiB
    # come out 37 - 57% fast in time, the MSCCL executor's per-step cost not being modelled
    # (docs/rccl-model.md, "One node: RCCL runs MSCCL").
    "mi300x-8gpu-xgmi_allreduce_rccl-aac8.txt mi300x-x8-xgmi 20"
    "rtx2080ti-2gpu-pcie3-nop2p_reduce.txt rtx2080ti-x2-pcie3-shm 15"
    "rtx2080ti-2gpu-pcie3-nop2p_allreduce.txt rtx2080ti-x2-pcie3-shm 15"
    "rtx2080ti-2gpu-pcie3-nop2p_broadcast.txt rtx2080ti-x2-pcie3-shm 15"
    "rtx2080ti-2gpu-pcie3-nop2p_allgather.txt rtx2080ti-x2-pcie3-shm 15"
    "a100-sxm4-80gb-8gpu-nvswitch_allreduce_nccl2.19.3.txt dgx-a100x8 30"
    "a100-sxm4-40gb-8gpu-nvswitch_allreduce_ncclunknown.txt dgx-a100x8 20"
    "rtx2080ti-2gpu-pcie3-nop2p_alltoall.txt rtx2080ti-x2-pcie3-shm 22"
    "h100-sxm-8gpu-x2-ib-ndr8x400g_allreduce_nccl2.26.2.txt hgx-h100x8-2n 25"
    "h100-sxm-8gpu-x2-ib400g_allreduce_default_ncclunknown.txt hgx-h100x8-2n 25"
    "h100-sxm-8gpu-x2-ib400g_allreduce_ring_ctas24_ncclunknown.txt hgx-h100x8-2n 25"
    # Multi-node machines collsim was not tuned on (docs/accuracy-multinode.md): each at its
    # measured datasheet error rounded up to the next 5%, a ceiling, not a goal.
    "h100-sxm-8gpu-x2-efa-p5-32x100g_allreduce_ncclunknown.txt aws-p5-h100x8-2n-efa 15"
    "a100-sxm4-80gb-8gpu-x2-efa-p4de-4x100g_allreduce_ncclunknown.txt aws-p4de-a100x8-2n-efa 75"
    "h100-sxm-8gpu-x2-oci-roce-16x200g_allreduce_nccl2.21.5_partial.txt oci-h100x8-2n-roce 5"
    "h100-sxm-8gpu-x2-gcp-a3mega-tcpxo-8x200g_allreduce_ncclunknown.txt gcp-a3mega-h100x8-2n-tcpxo 190"
    "gb200-nvl72-2rack-128gpu-mnnvl-ib_allreduce_nccl2.26.2_partial.txt gb200-nvl72-2rack-ib 10"
    "h100-sxm-8gpu-x2-gcp-a3high-tcpx-4nic_allgather_ncclunknown_partial.txt gcp-a3high-h100x8-2n-tcpx 155"
    "b200-8gpu-x2-gcp-a4-roce-8nic_allreduce_ncclunknown_partial.txt gcp-a4-b200x8-2n-roce 10"
    # 12 nodes with SHARP (CollNet Chain), 96 ranks, measured 9.4%.
    "h100-sxm-96gpu-ib-sharp-collnetchain_allreduce_nccl2.18.1_partial.txt hgx-h100x8-12n-sharp 12"
    # 2 x 8 MI355X over 8 Pollara 400 per node (ANP plugin), measured 32.6% with RCCL's own
    # tuning model picking (49.1% when collsim's fastest picked; RCCL's 64 rail channels across
    # the nodes, docs/accuracy-multinode.md "AMD across nodes"). The ceiling fell from 40 to 35
    # (37.4%) when RCCL's Tree/Simple got its chains along the mesh paths and its short-pipeline
    # chunk (docs/rccl-model.md, "How the engine runs RCCL's pick").
    "mi355x-8gpu-x2-roce-pollara8x400g-anp_allreduce_rccl2.26.6.txt mi355x-x8-2n-pollara 35"
    # The same machine class on Vultr (RCCL 2.27.7, 8 AMD AI NICs per node), measured 17.1%
    # (19.5% before RCCL's Tree/Simple chains and chunk; 15.8% under collsim's fastest), and
    # that README's single-node run (one process, -g 8), measured 13.8% since RCCL's MSCCL
    # all-pairs files run 1 KiB - 16 MiB there (20.9% under the ring RCCL's tuning model
    # picks; the ceiling fell from 22 to 15; docs/rccl-model.md).
    "mi355x-8gpu-x2-roce-ainic8x400g_allreduce_rccl2.27.7.txt mi355x-x8-2n-pollara 20"
    "mi355x-8gpu-xgmi_allreduce_rccl2.27.7.txt mi355x-x8-xgmi 15"
    # That run's all-to-all across the two nodes, measured 10.3% (bandwidth rows 0.7%).
    "mi355x-8gpu-x2-roce-ainic8x400g_alltoall_rccl2.27.7.txt mi355x-x8-2n-pollara 15"
    # nccl-tests' sendrecv on 2 to 64 nodes of 8 x B200 over 8 x NDR per node (Together AI),
    # measured 23.1%, 22.7%, 18.3%, 14.4%, 14.5% and 14.9% (bandwidth rows 4.5-10.6%, latency
    # 31-51%): NCCL 2.29.7 gives a network peer 4, 4, 2 and then 1 channel of 14 GB/s, and
    # Simple at every size (docs/accuracy-multinode.md).
    "b200-8gpu-x2-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 25"
    "b200-8gpu-x4-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 25"
    "b200-8gpu-x8-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 20"
    "b200-8gpu-x16-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 15"
    "b200-8gpu-x32-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 15"
    "b200-8gpu-x64-ib-ndr8x400g_sendrecv_nccl2.29.7.txt hgx-b200x8-64n 15"
)

echo "1..$((${#cases[@]} + 3))"
n=0
failed=0
for c in "${cases[@]}"; do
    read -r trace topo ceiling <<<"$c"
    n=$((n + 1))
    if out=$("$collsim" validate --topo "$topo" "traces/$trace" --max-error "$ceiling" 2>&1); then
        summary=$(echo "$out" | grep "all sizes:" | tr -s ' ')
        echo "ok $n /accuracy/$topo/$trace (<= $ceiling%):$summary"
    else
        echo "not ok $n /accuracy/$topo/$trace (<= $ceiling%): $(echo "$out" | tail -n 1)"
        failed=$((failed + 1))
    fi
done
# Issue 3's quality bar: on the seed's 4 x H100 trace every row's predicted time is within
# +-15% of the measured one (column 4 of validate's table is the signed time error).
n=$((n + 1))
worst=$("$collsim" validate --topo dgx-h100x4 traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt |
    awk '!/^#/ { e = $4; sub(/%/, "", e); e += 0; if (e < 0) e = -e; if (e > w) w = e } END { print w + 0 }')
if awk -v w="$worst" 'BEGIN { exit !(w <= 15) }'; then
    echo "ok $n /accuracy/dgx-h100x4/every-row-time-within-15pct (worst $worst%)"
else
    echo "not ok $n /accuracy/dgx-h100x4/every-row-time-within-15pct (worst $worst%)"
    failed=$((failed + 1))
fi
# One rank: NCCL copies the input to the output, and the GPU's copy rate (HBM / 2, shared by
# every channel of the GPU) predicts it. busbw is 0 there, so validate compares time only, and
# says so; the rows from 32 MiB up must be within 15% (docs/measurements/h100-cuda-nccl.md).
n=$((n + 1))
one=traces/collsim-measure/h100-sxm-1gpu_allreduce_nccl2.28.9.txt
out=$("$collsim" validate --topo dgx-h100x4 "$one")
worst=$(echo "$out" | awk '!/^#/ && $1 >= 33554432 { e = $4; sub(/%/, "", e); e += 0; if (e < 0) e = -e;
    if (e > w) w = e } END { print w + 0 }')
if echo "$out" | grep -q "busbw is 0 on 28 rows" && ! echo "$out" | grep -qi nan \
    && awk -v w="$worst" 'BEGIN { exit !(w <= 15) }'; then
    echo "ok $n /accuracy/dgx-h100x4/one-rank-copy (worst time error from 32 MiB $worst%)"
else
    echo "not ok $n /accuracy/dgx-h100x4/one-rank-copy (worst $worst%; or nan, or no note)"
    failed=$((failed + 1))
fi
# traces/topologies.tsv, which scripts/accuracy.py reads: every line is trace<TAB>topology<TAB>class
# (the accuracy table's row), the trace is in traces/ and the topology loads.
n=$((n + 1))
bad=$(awk -F'\t' '!/^#/ && NF > 0 && (NF != 3 || $1 == "" || $2 == "" || $3 == "") { print FILENAME ":" NR; exit }' \
    traces/topologies.tsv)
if [ -z "$bad" ]; then
    while IFS=$'\t' read -r trace topo _; do
        case "$trace" in "#"* | "") continue ;; esac
        if [ ! -f "traces/$trace" ]; then
            bad="traces/topologies.tsv: no file traces/$trace"
            break
        fi
        if ! "$collsim" topo check "$topo" >/dev/null 2>&1; then
            bad="traces/topologies.tsv: topology $topo does not load"
            break
        fi
    done <traces/topologies.tsv
fi
if [ -z "$bad" ]; then
    echo "ok $n /accuracy/index/three-columns-and-files"
else
    echo "not ok $n /accuracy/index/three-columns-and-files: $bad"
    failed=$((failed + 1))
fi
[ "$failed" -eq 0 ]
