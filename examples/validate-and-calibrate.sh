#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Validate-and-calibrate walk-through: hold collsim's prediction against a measured nccl-tests
# log, fit the topology's free parameters to it, and check what the fit is worth.
#
#   1. collsim validate: measured against predicted, per size and per regime, from datasheet
#      numbers only.
#   2. collsim calibrate: fit every parameter the log constrains (GSL Levenberg-Marquardt)
#      and write a calibrated topology file.
#   3. Which fitted values the data really pins down (1-sigma smaller than the value), and
#      which it does not: a lower error does not make every fitted number physical.
#   4. Refit only the pinned-down parameters, validate again, and compare the three.
#
# The log: 4 x H100 SXM on NVSwitch, all_reduce_perf -b 8 -e 1G -f 2 -g 4, NCCL 2.26.2
# (traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt); the topology: dgx-h100x4.
# Fitting to one log and validating on the same log measures the fit, not the prediction:
# with several logs, `collsim calibrate --leave-one-out` gives the honest figure.
#
# Run from the source tree after building:
#   COLLSIM=build/src/collsim examples/validate-and-calibrate.sh [OUTPUT-DIR]
# The calibrated topologies are written to OUTPUT-DIR (default: a new directory under $TMPDIR
# or /tmp) and kept. Takes about 20 seconds (the two fits).
set -euo pipefail

COLLSIM=${COLLSIM:-build/src/collsim}
if [[ ! -x $COLLSIM ]]; then
    echo "validate-and-calibrate.sh: no collsim binary at '$COLLSIM' (build it, or set COLLSIM)" >&2
    exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/collsim-calibrate.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Relative to the source tree, so the commands and their headers read as in the docs.
cd "$root"
trace=traces/h100-sxm-4gpu-nvswitch_allreduce_nccl2.26.2.txt
topo=dgx-h100x4

section() { printf '\n==== %s ====\n' "$*"; }
show() {
    printf '\n$ collsim %s\n' "$*"
    "$COLLSIM" "$@"
}

section "1. Datasheet prediction against the measured log"
# Each row: measured and predicted time and busbw, the signed error, and the algorithm and
# protocol collsim predicts NCCL ran (the log did not force one). The summary lines give the
# geometric mean of |busbw error| per regime: latency (< 64 KiB), knee, bandwidth (>= 64 MiB).
show validate --topo "$topo" "$trace"

section "2. Fit the topology to the log"
# Free parameters: per link kind the alpha and a bandwidth scale, per protocol the per-hop
# latency, the GPU's launch latency, per-step overhead and reduction rate. Each row keeps the
# algorithm/protocol of the datasheet prediction while the parameters move.
show calibrate --topo "$topo" "$trace" -o "$out/$topo-fit-all.json"

section "3. Which fitted values can be trusted"
# The calibrated file records every parameter with its 1-sigma uncertainty. A parameter whose
# uncertainty exceeds its value, or has none ('?': the data cannot separate it from another,
# or a single row fits it: rows_seen below 2), is not determined by this log: its fitted value
# is whatever helped the fit, physical or not.
# The table, then a last line "pinned: NAME,NAME...".
verdicts=$(python3 - "$out/$topo-fit-all.json" <<'PY'
import json, sys
params = json.load(open(sys.argv[1]))["calibration"]["parameters"]
pinned = []
print("  %-22s %14s %14s %14s  %s" % ("parameter", "datasheet", "fitted", "1-sigma", "verdict"))
for p in params:
    if not p.get("free"):
        continue
    sigma = p.get("sigma")
    ok = sigma is not None and sigma < abs(p["fitted"])
    if ok:
        pinned.append(p["name"])
    print("  %-22s %14.4g %14.4g %14s  %s" % (p["name"], p["datasheet"], p["fitted"],
          "?" if sigma is None else "%.4g" % sigma,
          "pinned down" if ok else "NOT determined by this log"))
print("pinned: " + ",".join(pinned))
PY
)
last=${verdicts##*$'\n'}
pinned=${last#pinned: }
printf '%s\n' "${verdicts%$'\n'*}"
echo "  (SI units: seconds, bytes/s)"
if [[ -z $pinned ]]; then
    echo "  no parameter is pinned down by this log; nothing to refit" >&2
    exit 1
fi

section "4. Refit only what the log pins down, and compare"
# Fewer free parameters fit the log less closely, but every value left is one the log
# determines. An error that stays in one regime (the bandwidth rows, say) is then one that no
# trustworthy parameter explains: look there before trusting that regime's predictions.
show calibrate --topo "$topo" "$trace" --params "$pinned" -o "$out/$topo-fit-pinned.json"

# The three topologies on the same log, from `collsim validate --format json`.
for t in "$topo" "$out/$topo-fit-all.json" "$out/$topo-fit-pinned.json"; do
    "$COLLSIM" validate --topo "$t" "$trace" --format json
done >"$out/validations.json"
echo
python3 - "$out/validations.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
decoder, docs, at = json.JSONDecoder(), [], 0
while at < len(text):
    while at < len(text) and text[at].isspace():
        at += 1
    if at < len(text):
        doc, at = decoder.raw_decode(text, at)
        docs.append(doc)
labels = ["datasheet", "fit: all parameters", "fit: pinned-down only"]
print("  geomean |busbw error| on the log      all  latency     knee  bandwidth")
for label, doc in zip(labels, docs):
    v = doc["traces"][0]
    cells = ["%7.1f%%" % (100 * v[k]["geomean_abs_busbw_error"])
             for k in ("all", "latency", "knee", "bandwidth")]
    print("  %-34s" % label + " ".join(cells))
PY
cat <<EOF

  Calibrated topologies (each says in its description that its numbers are fitted):
    $out/$topo-fit-all.json
    $out/$topo-fit-pinned.json
  Use one like a shipped topology:
    collsim run --topo $out/$topo-fit-pinned.json --op allreduce -b 8 -e 1G
EOF
