#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NCCL tuning walk-through: turn collsim's per-size choice of algorithm, protocol and channel
# count into tables NCCL loads, three ways:
#   1. the JSON of collsim's own tuner plugin              (collsim select --emit json)
#   2. NCCL_ALGO / NCCL_PROTO environment lines            (collsim select --emit env)
#   3. the CSV of NCCL's example tuner plugin              (collsim select --emit nccl-tuner-csv)
# then checks that the CSV and the JSON say the same thing, drives collsim's plugin the way
# NCCL does (a cost table per call, the plugin marks its pick), and compares collsim's choices
# with the ones NCCL's own cost model makes (collsim select --compare nccl).
#
# Run from the source tree after building:
#   COLLSIM=build/src/collsim examples/nccl-tuning.sh [OUTPUT-DIR]
# The tables are written to OUTPUT-DIR (default: a new directory under $TMPDIR or /tmp) and
# kept there. TOPO=... selects another shipped topology (default dgx-h100x8).
# Takes about 30 seconds: every collective is selected over 8 B ... 16 GiB, once per table.
set -euo pipefail

COLLSIM=${COLLSIM:-build/src/collsim}
TOPO=${TOPO:-dgx-h100x8}
if [[ ! -x $COLLSIM ]]; then
    echo "nccl-tuning.sh: no collsim binary at '$COLLSIM' (build it, or set COLLSIM)" >&2
    exit 2
fi
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/collsim-tuning.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)

section() { printf '\n==== %s ====\n' "$*"; }
show() {
    printf '\n$ collsim %s\n' "$*"
    "$COLLSIM" "$@"
}

section "1. The selection, as JSON for collsim's tuner plugin (collsim select --emit json)"
# For each collective and size collsim predicts every algorithm x protocol (with the channel
# count NCCL would use) and keeps the fastest; between grid sizes with different winners,
# bisection finds the exact size where the choice changes. The JSON holds the whole selection
# and, per collective, nccl_ranges: the same ranges kept to what NCCL can run (ring, tree,
# NVLS ...), which is what every table below says.
show select --topo "$TOPO" --emit json --output "$out/table.json"
python3 - "$out/table.json" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))
print("  %s: %d ranks on %d node(s), %s" % (table["topology"], table["nranks"], table["nnodes"],
                                           table["dtype"]))
for c in table["collectives"]:
    ranges = c.get("nccl_ranges") or []
    if not ranges:
        continue
    print("  %s:" % c["collective"])
    for r in ranges:
        top = "..." if r["max_bytes"] is None else "%d" % r["max_bytes"]
        print("    %12d - %-22s %s/%s, %d channels" % (r["min_bytes"], top, r["algorithm"],
                                                     r["protocol"], r["channels"]))
PY

# The communicator shape the tables are for (NCCL's plugins ignore them on any other).
shape=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))
print(t["nranks"], t["nnodes"])' "$out/table.json")
read -r nranks nnodes <<<"$shape"

section "2. NCCL_ALGO / NCCL_PROTO (collsim select --emit env)"
# The blunt instrument: one list of allowed algorithms and protocols per collective, no sizes.
# NCCL's own model still chooses among what is allowed; the comments say what is lost.
show select --topo "$TOPO" --emit env --output "$out/nccl-env.sh"
cat "$out/nccl-env.sh"

section "3. NCCL's example tuner: CSV (collsim select --emit nccl-tuner-csv)"
# One row per size range: collective, byte range, algorithm, protocol, channels, and the
# communicator shape it applies to (nNodes, nRanks). NCCL's ext-tuner/example plugin reads it.
show select --topo "$TOPO" --emit nccl-tuner-csv --output "$out/nccl_tuner.conf"
grep -v '^#' "$out/nccl_tuner.conf" | head -n 12
echo "... $(grep -vc '^#' "$out/nccl_tuner.conf") ranges in all"

section "4. The CSV and the JSON agree"
# The JSON keeps collsim's full selection and, per collective, nccl_ranges: the same ranges
# the CSV holds. Holding one against the other catches an emitter bug before NCCL does.
python3 - "$out/nccl_tuner.conf" "$out/table.json" <<'PY'
import csv, json, sys
conf, table = sys.argv[1:]
rows = [r for r in csv.reader(l for l in open(conf) if not l.startswith("#"))]
from_csv = [(r[0], int(r[1]), int(r[2]), r[3], r[4], int(r[5])) for r in rows]
# The JSON's last range of a collective has max_bytes null (no upper bound); the CSV
# writes SIZE_MAX there.
no_bound = 2**64 - 1
from_json = [(c["collective"], r["min_bytes"],
              no_bound if r["max_bytes"] is None else r["max_bytes"], r["algorithm"],
              r["protocol"], r["channels"])
             for c in json.load(open(table))["collectives"] for r in c.get("nccl_ranges") or []]
if from_csv != from_json:
    print("  MISMATCH between %s and %s:" % (conf, table))
    for a, b in zip(from_csv, from_json):
        if a != b:
            print("    csv  %s\n    json %s" % (a, b))
    sys.exit(1)
print("  %d ranges, identical in nccl_tuner.conf and table.json (nccl_ranges)" % len(from_csv))
PY

section "5. What NCCL would be told: collsim's plugin driven like NCCL drives it"
# NCCL calls the plugin's getCollInfo once per collective call with its cost table
# (float[algorithm][protocol], -1 = unusable) and then takes the cheapest entry; the plugin
# sets its pick to 0. Here Python plays NCCL: every entry usable (1.0), one call per size.
plugin=$(dirname "$COLLSIM")/tuner/libnccl-tuner-collsim.so
if [[ ! -f $plugin ]]; then
    echo "  $plugin is not built (meson option -Dtuner=true, then"
    echo "  ninja -C $(dirname "$(dirname "$COLLSIM")") src/tuner/libnccl-tuner-collsim.so)"
    plugin=/path/to/libnccl-tuner-collsim.so
elif ! python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$plugin" >/dev/null 2>&1; then
    # E.g. a sanitizer build, whose runtime has to be the first library of the process (the
    # same holds inside an NCCL program: give NCCL a plugin from a normal build).
    echo "  python3 cannot load $plugin (a sanitizer build?); skipped"
else
    COLLSIM_TUNER_FILE="$out/table.json" python3 - "$plugin" "$nranks" "$nnodes" <<'PY'
import ctypes, sys
path, nranks, nnodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lib = ctypes.CDLL(path)
# ncclTuner_v4_t: name, init, getCollInfo, destroy (NCCL 2.23-2.27; the plugin also exports
# v5 for 2.28 and v3 for 2.22).
Init = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p,
                        ctypes.POINTER(ctypes.c_void_p))
GetCollInfo = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                               ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.POINTER(ctypes.c_int))
Destroy = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
class TunerV4(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("init", Init), ("getCollInfo", GetCollInfo),
                ("destroy", Destroy)]
tuner = TunerV4.in_dll(lib, "ncclTunerPlugin_v4")
ctx = ctypes.c_void_p()
assert tuner.init(nranks, nnodes, None, ctypes.byref(ctx)) == 0
ALGOS = ["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"]
PROTOS = ["ll", "ll128", "simple"]
COLLS = {"broadcast": 0, "allreduce": 4}
print("  plugin %s (%s), %d ranks on %d node(s)" % (tuner.name.decode(), path, nranks, nnodes))
print("  %-10s %12s  %-18s %s" % ("collective", "bytes", "NCCL would run", "channels"))
for coll in ("allreduce", "broadcast"):
    for size in (8 << 10, 1 << 20, 16 << 20, 256 << 20):
        table = (ctypes.c_float * (len(ALGOS) * len(PROTOS)))(*([1.0] * (len(ALGOS) * len(PROTOS))))
        channels = ctypes.c_int(0)
        rc = tuner.getCollInfo(ctx, COLLS[coll], size, 1, ctypes.cast(table, ctypes.c_void_p),
                               len(ALGOS), len(PROTOS), 0, ctypes.byref(channels))
        assert rc == 0
        best = min(range(len(table)), key=lambda i: table[i])
        pick = "%s/%s" % (ALGOS[best // len(PROTOS)], PROTOS[best % len(PROTOS)]) \
            if table[best] == 0.0 else "(NCCL's own)"
        print("  %-10s %12d  %-18s %s" % (coll, size, pick, channels.value or "NCCL's"))
tuner.destroy(ctx)
PY
fi

section "6. collsim's choice against NCCL's own cost model (collsim select --compare nccl)"
# NCCL's analytical model (tuning.cc, emulated for this topology) picks per size; collsim's
# engine then times NCCL's pick and its own. The loss is what the table would win back if the
# engine is right; hold the engine against measured logs first (collsim validate).
show select --topo "$TOPO" --op allreduce --compare nccl -b 1K -e 1G -f 4

section "7. Loading the tables into NCCL"
plugin_abs=$plugin
[[ -f $plugin ]] && plugin_abs=$(realpath -- "$plugin")
cat <<EOF
  The tables are in $out:
    nccl-env.sh       NCCL_ALGO / NCCL_PROTO lines
    nccl_tuner.conf   NCCL's example tuner CSV
    table.json        collsim's tuner plugin table

  a) Environment only (per-collective lists need a recent NCCL; see the file's comments):
       source $out/nccl-env.sh
       mpirun -np $nranks ./all_reduce_perf -b 8 -e 1G -f 2

  b) collsim's tuner plugin (NCCL 2.22 or later; tuner ABI v3, v4, v5):
       NCCL_TUNER_PLUGIN=$plugin_abs \\
       COLLSIM_TUNER_FILE=$out/table.json \\
       NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING \\
       mpirun -np $nranks ./all_reduce_perf -b 8 -e 1G -f 2
     (with mpirun, pass the variables on to every rank, e.g. Open MPI's -x NAME)

  c) NCCL's example tuner (built from NCCL's source tree, ext-tuner/example):
       NCCL_TUNER_PLUGIN=/path/to/nccl/ext-tuner/example/libnccl-tuner-example.so \\
       NCCL_TUNER_CONFIG_FILE=$out/nccl_tuner.conf \\
       mpirun -np $nranks ./all_reduce_perf -b 8 -e 1G -f 2

  One process per GPU: $nranks on $nnodes node(s) (give mpirun your hosts when there are several).
  NCCL_DEBUG_SUBSYS=TUNING makes the plugin log each decision ("TUNER/collsim: ...").
  A table is for one communicator shape (ranks and nodes); the plugin keeps NCCL's own
  choices on any other, and says so in the log.
EOF
