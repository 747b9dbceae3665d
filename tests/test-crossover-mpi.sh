#!/bin/sh
# SPDX-License-Identifier: MIT
# `collsim crossover --backend mpi` end to end on real MPI processes (issue 34): all-reduce on
# cpu-host-shm with 4 ranks, where select predicts two crossovers (recursive doubling -> rhd,
# rhd -> ring). Checks what does not depend on the machine's speed: every predicted crossover
# is reported, with a status the search can give; a measured one with its interval around the
# measured size and a ratio; the traces written (one per algorithm) read back by validate;
# --calibrate's re-prediction reported; the ranks other than 0 silent; an NVLS crossover listed
# as unmeasurable; --plot's SVG; --emit's tables (table, the example tuner's CSV, json read by collsim's
# tuner plugin) open each range at the size the same run's report measured (or predicted,
# where it measured no crossover). Where the measured crossover lies, and whether the calibrated prediction
# moves toward it, are timings of a shared 2-core machine (4 busy-polling ranks): they are
# printed, not gated; tests/test-crossover.c asserts the direction on a simulated machine.
# Usage: test-crossover-mpi.sh COLLSIM MPIRUN [MPIRUN-FLAGS...]
set -u

collsim=$1
mpirun=$2
shift 2
failures=0

fail () {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A small budget: 3 to 4 samples of 5 iterations per side and size, at most 8 sizes each.
"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo cpu-host-shm --ranks 4 \
    -n 5 -w 2 --repeats 3,4 --max-points 8 --format csv --traces "$tmp/traces" --calibrate \
    --emit table --emit-output "$tmp/tuning.txt" --plot "$tmp/xo.svg" >"$tmp/out.csv" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover -np 4 exited $status: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && fail "stderr not empty: $(cat "$tmp/err")"
cat "$tmp/out.csv"

header=$(head -n 1 "$tmp/out.csv")
case $header in
collective,from,to,predicted_bytes,status,measured_bytes,lo_bytes,hi_bytes,ratio,*) ;;
*) fail "unexpected CSV header: $header" ;;
esac
rows=$(tail -n +2 "$tmp/out.csv" | grep -c .)
[ "$rows" -eq 2 ] || fail "expected 2 crossovers (one report line each, rank 0 only), got $rows"
grep -q '^all_reduce,recursive_doubling/Simple/1ch,rhd/Simple/1ch,6784,' "$tmp/out.csv" \
    || fail "missing the predicted recursive_doubling -> rhd crossover at 6784 B"
grep -q '^all_reduce,rhd/Simple/1ch,ring/Simple/2ch,65536,' "$tmp/out.csv" \
    || fail "missing the predicted rhd -> ring crossover at 65536 B"
# Fields: 5 status, 6 measured, 7 lo, 8 hi, 9 ratio, 10 noise, 16 samples, 17 points,
# 19 recalibrated bytes, 20 moved.
bad=$(tail -n +2 "$tmp/out.csv" | awk -F, '
    $5 !~ /^(measured|tie|from-throughout|to-throughout)$/ { print "status " $5; next }
    $16 < 6 || $17 < 1 || $17 > 8 { print "samples " $16 " points " $17; next }
    $10 == "" { print "no noise figure"; next }
    $5 == "measured" && !($7 + 0 < $6 + 0 && $6 + 0 <= $8 + 0) { print "interval " $7 " " $6 " " $8; next }
    $5 == "measured" && ($9 == "" || $20 !~ /^(toward|away|unmoved|gone)$/) { print "ratio/moved " $9 " " $20; next }
    $5 != "measured" && $6 != "" { print "a size for status " $5 }')
[ -z "$bad" ] || fail "malformed rows: $bad"

# One trace per algorithm measured, each read back by validate.
n=$(ls "$tmp/traces" | wc -l)
[ "$n" -eq 3 ] || fail "expected 3 traces (recursive_doubling, rhd, ring), got $n: $(ls "$tmp/traces")"
for t in "$tmp/traces"/*.txt; do
    grep -q '^# backend: mpi$' "$t" || fail "$t: no backend header"
    grep -q '^# command: collsim crossover --backend mpi' "$t" || fail "$t: no command header"
    grep -q '^# algo: ' "$t" || fail "$t: no algo header"
    "$collsim" validate --topo cpu-host-shm "$t" >"$tmp/validate" 2>&1 \
        || fail "validate $t: $(cat "$tmp/validate")"
done

# --plot from the same run: XML, a panel per crossover named by its pair.
python3 - "$tmp/xo.svg" <<'PY' || fail "--plot: not an SVG with a panel per crossover"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg"), root.tag
texts = ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]
for pair in ("recursive_doubling/Simple/1ch -> rhd/Simple/1ch", "rhd/Simple/1ch -> ring/Simple/2ch"):
    assert texts.count(pair) == 1, (pair, texts)
PY

# --emit table from the same run: each crossover's range opens at the measured size where the
# report has one (marked), at the predicted size otherwise (tie, no crossover in the window,
# or a measured size that reaches the neighbouring boundary, which a note says); the notes
# name the backend and every trace written.
grep -q '^# boundaries measured by collsim crossover --backend mpi, 4 ranks' "$tmp/tuning.txt" \
    || fail "--emit table: no note on the measured boundaries"
for t in "$tmp/traces"/*.txt; do
    grep -qF "# trace: $t" "$tmp/tuning.txt" || fail "--emit table: trace $t not named"
done
tail -n +2 "$tmp/out.csv" | while IFS=, read -r coll from to predicted status measured rest; do
    expect=$predicted
    mark=""
    if [ "$status" = measured ] \
        && ! grep -q "^# predicted kept: allreduce $from -> $to at $predicted B: the measured" \
            "$tmp/tuning.txt"; then
        expect=$measured
        mark=" (measured boundary)"
    fi
    label=${to%/*}
    line=$(grep -E "^#   +$expect - +[0-9.]+ +$label/" "$tmp/tuning.txt")
    [ -n "$line" ] || fail "--emit table: no range of $label from $expect B ($status, measured '$measured')"
    case $line in
    *"(measured boundary)") [ -n "$mark" ] || fail "--emit table: $line marked measured" ;;
    *) [ -z "$mark" ] || fail "--emit table: $line not marked measured" ;;
    esac
    echo "boundary $from -> $to: $status, emitted at $expect B$mark"
done >"$tmp/boundaries" 2>&1
cat "$tmp/boundaries"
grep -q '^FAIL' "$tmp/boundaries" && failures=$((failures + 1))

# Between NCCL's algorithms (eth-cpu-8n on 4 ranks: tree -> ring), --nccl-only: the example
# tuner's CSV from the same run as the JSON report, read by the rules of NCCL's example
# tuner (plugins/tuner/example/plugin.c: fgets into 256 bytes, '#' and empty lines skipped,
# 10 comma-separated fields); then --emit json, loaded by collsim's own plugin.
"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo eth-cpu-8n --ranks 4 --nccl-only \
    -n 5 -w 2 --repeats 3,3 --max-points 6 --format json --output "$tmp/nccl.json" \
    --emit nccl-tuner-csv >"$tmp/nccl_tuner.conf" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover --emit nccl-tuner-csv exited $status: $(cat "$tmp/err")"
cat "$tmp/nccl_tuner.conf"
python3 - "$tmp/nccl.json" "$tmp/nccl_tuner.conf" <<'PY' || fail "nccl-tuner-csv against the report"
import json, sys
report = json.load(open(sys.argv[1]))
xs = report["crossovers"]
assert len(xs) == 1, xs
x = xs[0]
assert (x["from"]["algorithm"], x["to"]["algorithm"]) == ("tree", "ring"), x
text = open(sys.argv[2], "rb").read().decode()
rows = []
for line in text.split("\n"):
    assert len(line) + 1 < 256, "line over the example tuner's buffer: " + line
    if line == "" or line.startswith("#"):
        continue
    f = line.split(",")
    assert len(f) == 10, line
    rows.append(f)
kept = "# predicted kept: allreduce tree/Simple/1ch -> ring/Simple/1ch at %d B: the measured" \
    % x["predicted_bytes"] in text
applied = x["status"] == "measured" and not kept
expect = x["measured_bytes"] if applied else x["predicted_bytes"]
assert [r[3] for r in rows] == ["tree", "ring"], rows
assert int(rows[0][1]) == 0 and int(rows[0][2]) == expect - 1 and int(rows[1][1]) == expect, \
    (rows, x)
assert ("# next range: from a measured crossover at %d B" % expect in text) == applied, text
assert "# boundaries measured by collsim crossover --backend mpi, 4 ranks" in text
print("nccl-tuner-csv: %s, boundary at %d B" % (x["status"], expect))
PY

"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo eth-cpu-8n --ranks 4 --nccl-only \
    -n 5 -w 2 --repeats 3,3 --max-points 6 --format json --output "$tmp/nccl2.json" \
    --emit json --emit-output "$tmp/table.json" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover --emit json exited $status: $(cat "$tmp/err")"
plugin=$(dirname "$collsim")/tuner/libnccl-tuner-collsim.so
if [ ! -f "$plugin" ] || ! python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$plugin" \
    >/dev/null 2>&1; then
    echo "collsim's tuner plugin not built or not loadable here (a sanitizer build): skipped"
else
    COLLSIM_TUNER_FILE="$tmp/table.json" python3 - "$plugin" "$tmp/nccl2.json" <<'PY' \
        || fail "collsim's tuner plugin on the --emit json table"
import ctypes, json, sys
x = json.load(open(sys.argv[2]))["crossovers"][0]
table = json.load(open(__import__("os").environ["COLLSIM_TUNER_FILE"]))
ranges = table["collectives"][0]["nccl_ranges"]
boundary = ranges[1]["min_bytes"]
if x["status"] == "measured":
    assert boundary in (x["measured_bytes"], x["predicted_bytes"]), (boundary, x)
    assert ranges[1].get("min_measured", False) == (boundary == x["measured_bytes"]), ranges
else:
    assert boundary == x["predicted_bytes"] and "min_measured" not in ranges[1], (boundary, x)
lib = ctypes.CDLL(sys.argv[1])
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
assert tuner.init(4, 4, None, ctypes.byref(ctx)) == 0
def pick(size):
    # NCCL_ALGO_TREE 0, NCCL_ALGO_RING 1; NCCL_PROTO_SIMPLE 2; allreduce is ncclFunc 4.
    cost = (ctypes.c_float * 21)(*([1.0] * 21))
    channels = ctypes.c_int(0)
    assert tuner.getCollInfo(ctx, 4, size, 1, ctypes.cast(cost, ctypes.c_void_p), 7, 3, 0,
                             ctypes.byref(channels)) == 0
    return [i for i in range(21) if cost[i] == 0.0]
assert pick(boundary - 1) == [0 * 3 + 2], pick(boundary - 1)
assert pick(boundary) == [1 * 3 + 2], pick(boundary)
tuner.destroy(ctx)
print("plugin: tree/simple below %d B, ring/simple from it" % boundary)
PY
fi

# The table: the calibrated line for each crossover, from the same kind of run (one
# crossover only, --between, to keep it short), with --progress: rank 0 alone prints the
# lines, all on stderr (a line per point measured, the crossover's step, the fit's), none on
# standard output.
"$mpirun" "$@" -np 4 "$collsim" crossover --backend mpi --topo cpu-host-shm --ranks 4 \
    --between rhd,ring -n 5 -w 2 --repeats 3,3 --max-points 4 --calibrate --progress \
    >"$tmp/out.txt" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "crossover --between exited $status: $(cat "$tmp/err")"
cat "$tmp/out.txt"
[ "$(grep -c -- '^[a-z].* -> ' "$tmp/out.txt")" -eq 1 ] || fail "--between rhd,ring: expected one crossover"
grep -q '^  calibrated  ' "$tmp/out.txt" || fail "--calibrate: no calibrated line"
grep -q '^# calibrated on the measurements: rms time error' "$tmp/out.txt" \
    || fail "--calibrate: no fit summary"
grep -q '^collsim crossover: ' "$tmp/out.txt" && fail "--progress: a progress line on stdout"
grep -v '^collsim crossover: ' "$tmp/err" | grep -q . \
    && fail "--progress: stderr holds more than progress lines: $(cat "$tmp/err")"
[ "$(grep -c '^collsim crossover: 0/1 crossovers, now rhd/Simple/1ch -> ring/Simple/2ch: point 1 of at most 4, ' "$tmp/err")" -eq 1 ] \
    || fail "--progress: expected one line for the first point (rank 0 only): $(cat "$tmp/err")"
[ "$(grep -c '^collsim crossover: 1/1 crossovers (rhd/Simple/1ch -> ring/Simple/2ch: ' "$tmp/err")" -eq 1 ] \
    || fail "--progress: expected one step for the crossover (rank 0 only): $(cat "$tmp/err")"
[ "$(grep -c '^collsim crossover: 1/1 fits (the fit to the measurements: rms ' "$tmp/err")" -eq 1 ] \
    || fail "--progress: expected one step for the fit: $(cat "$tmp/err")"

# NVLS cannot run on CPU processes: listed, nothing measured (no mpirun needed).
"$collsim" crossover --backend mpi --topo dgx-h100x8 --between nvls,ring --format json \
    >"$tmp/nvls.json" 2>"$tmp/err"
status=$?
[ $status -eq 0 ] || fail "NVLS crossovers exited $status: $(cat "$tmp/err")"
grep -Eq '"status":[[:space:]]*"unmeasurable"' "$tmp/nvls.json" || fail "NVLS crossover not listed as unmeasurable"
grep -Eq '"why":[[:space:]]*"nvls/Simple/16ch: needs NVSwitch multicast' "$tmp/nvls.json" \
    || fail "NVLS crossover without its reason"
grep -Eq '"status":[[:space:]]*"measured"' "$tmp/nvls.json" && fail "an NVLS crossover was measured"
# Its schema (docs/formats.md, collsim-crossover), as tests/test-cli-json.c checks the others.
tr -d ' \t\n' <"$tmp/nvls.json" | grep -q '^{"schema":{"name":"collsim-crossover","version":1}' \
    || fail "the JSON does not start with its schema"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "ok"
