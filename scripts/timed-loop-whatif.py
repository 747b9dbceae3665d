#!/usr/bin/env python3
"""What-if for docs/accuracy.md "Where collsim misses": nccl-tests' timed loop as a pipeline.

collsim times a trace run with one thread driving G GPUs (nccl-tests -g G) as the thread's
G launches, then the GPUs' work, the GPUs starting together once all are launched (serial).
nccl-tests issues the next iteration while the GPUs still run this one, so an iteration may
instead cost the longer of the host's G launches and one launch plus the GPUs' work. This script holds both against
every shipped trace with G > 1: the second from `collsim validate -g 1` (one launch, then the
GPUs together) and the topology's launch, per row max(G * launch, that time).

Usage: scripts/timed-loop-whatif.py [--collsim build/src/collsim] [--index traces/topologies.tsv]
Prints, per trace, the geometric-mean |busbw error| of each timing over all rows and per regime
as `collsim validate` splits them (latency < 64 KiB, knee, bandwidth >= 64 MiB); nothing here
changes a prediction, and the launch is the shipped topology's."""
import argparse
import json
import math
import os
import re
import subprocess
import sys


def gpus_per_thread(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"nThread\s+\d+\s+nGpus\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return 1


def validate(collsim, topo, trace, g):
    out = subprocess.run([collsim, "validate", "--topo", topo, "-g", str(g), "--format", "json",
                          trace], capture_output=True, text=True, check=True).stdout
    return json.loads(out)["traces"][0]["rows"]


def launch_us(collsim, topo):
    """The launch cost `collsim topo show` prints ("GPU costs: launch 4.50 us, ...")."""
    out = subprocess.run([collsim, "topo", "show", topo], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"GPU costs: launch ([0-9.]+) (ns|us|ms)", out)
    return float(m.group(1)) * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[m.group(2)]


def geomean_abs(errors):
    errors = [abs(e) for e in errors if e]
    if not errors:
        return float("nan")
    return math.exp(sum(math.log(e) for e in errors) / len(errors))


REGIMES = (("all", 0, float("inf")), ("latency", 0, 64 << 10), ("knee", 64 << 10, 64 << 20),
           ("bandwidth", 64 << 20, float("inf")))


def by_regime(sizes, errors):
    """The geometric-mean |error| of the rows of each of REGIMES (NaN where it has none)."""
    return [geomean_abs([e for s, e in zip(sizes, errors) if lo <= s < hi])
            for _, lo, hi in REGIMES]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collsim", default="build/src/collsim")
    ap.add_argument("--index", default="traces/topologies.tsv")
    args = ap.parse_args()
    base = os.path.dirname(args.index)
    print("geometric-mean |busbw error|, serial / pipeline")
    print("%-78s %2s" % ("trace (topology)", "-g") +
          "".join(" %15s" % name for name, _, _ in REGIMES))
    with open(args.index, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, topo = line.rstrip("\n").split("\t")[:2]
            trace = os.path.join(base, name)
            g = gpus_per_thread(trace)
            if g < 2:
                continue
            launch = launch_us(args.collsim, topo)
            serial = validate(args.collsim, topo, trace, g)
            together = validate(args.collsim, topo, trace, 1)
            sizes = [r["size_bytes"] for r in serial]
            # busbw error = predicted busbw / measured - 1 = measured time / predicted time - 1
            pipeline = [r1["measured_us"] / max(g * launch, r1["predicted_us"]) - 1
                        for r1 in together]
            cells = zip(by_regime(sizes, [r["busbw_error"] for r in serial]),
                        by_regime([r["size_bytes"] for r in together], pipeline))
            print("%-78s %2d" % ("%s (%s)" % (name, topo), g) +
                  "".join(" %15s" % ("%.1f%% / %.1f%%" % (100 * a, 100 * b)) for a, b in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
