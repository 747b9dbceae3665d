#!/usr/bin/env bash
# Runs the GPU half of the test suite and records traces on a machine with an NVIDIA GPU.
#
#   scripts/gpu-session.sh OUTDIR [STEP...]
#
# Steps: info test measure tuner (the default), and sanitize: the GPU tests under
# compute-sanitizer memcheck, then initcheck with graphs and again without
# (COLLSIM_CUDA_GRAPHS=0), which tells whether initcheck's reports on graph launches
# (docs/measurements/h100-cuda-nccl.md) are the graphs' or the plans'. SANITIZE_RUNS picks
# among memcheck:1 initcheck:1 initcheck:0, SHARDS sets the parallel processes (default 8),
# SANITIZE_LIMIT each one's time limit in seconds (900);
# TEST_LIMIT (420) and MEASURE_LIMIT (300, each trace) bound the other steps.
#
# It builds and uses build-gpu/ (meson setup build-gpu -Dcuda=enabled) unless COLLSIM_GPU_BIN names a
# folder holding collsim, test-backend-cuda and libnccl-tuner-collsim.so; COLLSIM_GPU_LIB may
# name a folder of shared libraries to put first on the library path (a GPU machine without
# GLib, cJSON or GSL installed gets them from there). Every trace, log and the tuner's report
# go to OUTDIR; nothing here edits a number.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:?usage: scripts/gpu-session.sh OUTDIR [STEP...]}
shift
steps=${*:-info test measure tuner}
mkdir -p "$out"

bin=${COLLSIM_GPU_BIN:-}
if [ -z "$bin" ]; then
    bin=$PWD/build-gpu/bin-gpu
    mkdir -p "$bin"
    [ -f build-gpu/build.ninja ] || meson setup build-gpu -Dcuda=enabled >/dev/null || exit 1
    meson compile -C build-gpu >/dev/null || exit 1
    cp build-gpu/src/collsim build-gpu/tests/test-backend-cuda "$bin"/
    cp build-gpu/src/tuner/libnccl-tuner-collsim.so "$bin"/ 2>/dev/null || true
fi
# NCCL may live in the toolkit, the system library path or a Python wheel (nvidia-nccl-*).
nccl_dir=$(dirname "$( (ls /usr/local/cuda/lib64/libnccl.so.2 \
    /usr/lib/x86_64-linux-gnu/libnccl.so.2 \
    /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2 \
    /opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 \
    /usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null || true) | head -1)")
export LD_LIBRARY_PATH=${COLLSIM_GPU_LIB:+$COLLSIM_GPU_LIB:}$nccl_dir:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export COLLSIM_TOPO_PATH=$PWD/topologies
collsim=$bin/collsim

step() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if step info; then
    {
        date -u +%Y-%m-%dT%H:%M:%SZ
        git rev-parse HEAD 2>/dev/null || true
        nvidia-smi
        nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv
        echo "libnccl: $nccl_dir"
        ldd "$collsim"
    } >"$out/info.txt" 2>&1
    head -30 "$out/info.txt"
fi

if step test; then
    # The GPU tests, as `meson test --suite cuda` runs them.
    start=$(date +%s)
    timeout "${TEST_LIMIT:-420}" "$bin/test-backend-cuda" >"$out/test-backend-cuda.log" 2>&1
    rc=$?
    echo "test-backend-cuda: exit $rc in $(($(date +%s) - start)) s"
    grep -E '^(not ok|# Start of|Bail)' "$out/test-backend-cuda.log" | grep -v '# Start' | head -20
    grep -c '^ok' "$out/test-backend-cuda.log" | sed 's/^/ok: /'
    tail -3 "$out/test-backend-cuda.log"
fi

if step sanitize; then
    # compute-sanitizer slows every CUDA call by an order of magnitude (memcheck got through 19
    # of 202 tests in 120 s on an H200), so the tests are dealt round-robin to SHARDS
    # processes on the same GPU. Too many shards slow each other down: on the H200 the 8 tests
    # 10 memcheck and 5 initcheck shards did not reach in 210 s took 2-29 s each, 8 at once.
    sanitizer=$(command -v compute-sanitizer)
    for candidate in /usr/local/cuda*/bin/compute-sanitizer; do
        [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer=$candidate
    done
    shards=${SHARDS:-8}
    limit=${SANITIZE_LIMIT:-900}
    mapfile -t tests < <("$bin/test-backend-cuda" -l 2>/dev/null | grep '^/')
    for run in ${SANITIZE_RUNS:-memcheck:1 initcheck:1 initcheck:0}; do
        tool=${run%:*}
        graphs=${run#*:}
        start=$(date +%s)
        for ((k = 0; k < shards; k++)); do
            args=()
            for ((i = k; i < ${#tests[@]}; i += shards)); do args+=(-p "${tests[i]}"); done
            log="$out/sanitize-$tool-graphs$graphs-$k.log"
            COLLSIM_CUDA_GRAPHS=$graphs timeout "$limit" "$sanitizer" --tool "$tool" \
                --print-limit 20 --error-exitcode 9 "$bin/test-backend-cuda" "${args[@]}" \
                >"$log" 2>&1 &
        done
        wait
        logs=("$out/sanitize-$tool-graphs$graphs"-*.log)
        cat "${logs[@]}" >"$out/sanitize-$tool-graphs$graphs.log"
        rm -f "${logs[@]}"
        log="$out/sanitize-$tool-graphs$graphs.log"
        echo "$tool (graphs $graphs, $shards shards): $(($(date +%s) - start)) s," \
            "$(grep -c '^ok' "$log") ok of ${#tests[@]}, $(grep -c '^not ok' "$log") not ok;" \
            "errors: $(grep -hE 'ERROR SUMMARY: [0-9]+ errors?$' "$log" | awk '{s += $4} END {print s + 0}')" \
            "in $(grep -cE 'ERROR SUMMARY: [0-9]+ errors?$' "$log") finished shards of $shards" \
            "(a shard's errors: grep -B2 'Program hit\|Invalid\|Uninitialized' $log)"
    done
fi

# One trace per command; the command line is in the trace's header.
measure() {
    local name=$1
    shift
    local start
    start=$(date +%s)
    # Debug messages time each point's phases on the host (schedule, allocation, inputs,
    # checks, warm-up, timed) into NAME.err.
    if G_MESSAGES_DEBUG=collsim timeout "${MEASURE_LIMIT:-300}" "$collsim" measure "$@" \
        --output "$out/$name.txt" 2>"$out/$name.err"; then
        echo "$name: ok in $(($(date +%s) - start)) s"
    else
        echo "$name: FAILED ($(head -c 300 "$out/$name.err"))"
    fi
}

if step measure; then
    # The command that spent 48 s on its 64 MiB point when the host computed the reference
    # (docs/measurements/h200-cuda.md).
    measure cuda-vr8-allreduce-ring-64M-1G --backend cuda --op allreduce --algo ring \
        --virtual-ranks 8 -b 64M -e 1G -f 4 -n 5 -w 2
    measure cuda-vr8-allreduce-ring --backend cuda --op allreduce --algo ring --virtual-ranks 8 \
        -b 8 -e 1G -f 2 -n 20 -w 5
    measure cuda-vr8-allgather-ring --backend cuda --op allgather --algo ring --virtual-ranks 8 \
        -b 8 -e 1G -f 2 -n 20 -w 5
    measure cuda-vr8-allreduce-tree --backend cuda --op allreduce --algo tree --virtual-ranks 8 \
        -b 8 -e 256M -f 4 -n 20 -w 5
    # The same ring issued from the host every iteration: what issuing costs.
    COLLSIM_CUDA_GRAPHS=0 measure cuda-vr8-allreduce-ring-nograph --backend cuda --op allreduce \
        --algo ring --virtual-ranks 8 -b 8 -e 64M -f 8 -n 20 -w 5
    measure nccl-1gpu-allreduce --backend nccl --op allreduce -b 8 -e 1G -f 2 -n 20 -w 5
fi

if step tuner; then
    # NCCL loads collsim's tuner plugin; NCCL_DEBUG shows whether it did.
    if [ -f "$bin/libnccl-tuner-collsim.so" ]; then
        "$collsim" select --topo dgx-h100x4 --emit json --output "$out/tuner.json" \
            >/dev/null 2>&1
        NCCL_TUNER_PLUGIN=$bin/libnccl-tuner-collsim.so COLLSIM_TUNER_FILE=$out/tuner.json \
            NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
            timeout 120 "$collsim" measure --backend nccl --op allreduce -b 1M -e 1M -n 2 \
            --output "$out/tuner-trace.txt" >"$out/tuner.log" 2>&1
        echo "tuner: exit $?"
        grep -i -E 'tuner|plugin' "$out/tuner.log" | head -10
    fi
fi
