#!/usr/bin/env bash
# Runs the GPU half of the test suite and records traces on a machine with an NVIDIA GPU.
#
#   scripts/gpu-session.sh OUTDIR [STEP...]
#
# Steps: info test measure tuner (the default), and sanitize: the GPU tests under
# compute-sanitizer memcheck, then initcheck with graphs and again without
# (COLLSIM_CUDA_GRAPHS=0), which tells whether initcheck's reports on graph launches
# (docs/measurements/h100-cuda-nccl.md) are the graphs' or the plans'.
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
    timeout 420 "$bin/test-backend-cuda" >"$out/test-backend-cuda.log" 2>&1
    rc=$?
    echo "test-backend-cuda: exit $rc in $(($(date +%s) - start)) s"
    grep -E '^(not ok|# Start of|Bail)' "$out/test-backend-cuda.log" | grep -v '# Start' | head -20
    grep -c '^ok' "$out/test-backend-cuda.log" | sed 's/^/ok: /'
    tail -3 "$out/test-backend-cuda.log"
fi

if step sanitize; then
    sanitizer=$(command -v compute-sanitizer)
    for candidate in /usr/local/cuda*/bin/compute-sanitizer; do
        [ -z "$sanitizer" ] && [ -x "$candidate" ] && sanitizer=$candidate
    done
    for run in memcheck:1 initcheck:1 initcheck:0; do
        tool=${run%:*}
        graphs=${run#*:}
        log="$out/sanitize-$tool-graphs$graphs.log"
        start=$(date +%s)
        COLLSIM_CUDA_GRAPHS=$graphs timeout 900 "$sanitizer" --tool "$tool" --print-limit 20 \
            --error-exitcode 9 "$bin/test-backend-cuda" >"$log" 2>&1
        echo "$tool (graphs $graphs): exit $? in $(($(date +%s) - start)) s," \
            "$(grep -c '^ok' "$log") ok, $(grep -c '^not ok' "$log") not ok;" \
            "$(grep -m1 'ERROR SUMMARY' "$log")"
    done
fi

# One trace per command; the command line is in the trace's header.
measure() {
    local name=$1
    shift
    local start
    start=$(date +%s)
    if timeout 300 "$collsim" measure "$@" --output "$out/$name.txt" 2>"$out/$name.err"; then
        echo "$name: ok in $(($(date +%s) - start)) s"
    else
        echo "$name: FAILED ($(head -c 300 "$out/$name.err"))"
    fi
}

if step measure; then
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
