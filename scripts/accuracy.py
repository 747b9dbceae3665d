#!/usr/bin/env python3
"""The accuracy table (docs/accuracy.md; README keeps the summary): for every trace in traces/ (mapped to the shipped topology of
its machine by traces/topologies.tsv), the geometric-mean |busbw error| of collsim's prediction
with the datasheet topology, with a topology calibrated on every trace of that machine, with one calibrated on the others only
(leave-one-out; needs two or more traces), and leave-one-machine-out: the machine's traces
predicted with what one joint fit of the other machines of its class (the same GPU model) learnt
of the components it shares with them (`collsim calibrate --topo A ... --topo B ...
--leave-one-machine-out`; its own components stay datasheet; needs two or more machines).

Usage: scripts/accuracy.py [--collsim build/src/collsim] [--index traces/topologies.tsv]
                           [--jobs N] [--timeout S] [--only TOPOLOGY]... [--prior-weight W]
                           [--params LIST] [--no-machine-out]
All numbers come from `collsim calibrate --format json`; nothing here computes an error."""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
from collections import OrderedDict


def header(path, key):
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#\s*%s:\s*(.*)$" % re.escape(key), line)
            if m:
                return m.group(1).strip()
    return None


def pct(x):
    return "—" if x is None else "%.1f%%" % (100 * x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collsim", default="build/src/collsim")
    ap.add_argument("--index", default="traces/topologies.tsv")
    ap.add_argument("--jobs", type=int, default=1, help="machines calibrated at once")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds allowed for one machine's calibration (default: no limit)")
    ap.add_argument("--only", action="append", default=[], metavar="TOPOLOGY",
                    help="only the traces of this topology (repeatable)")
    ap.add_argument("--prior-weight", metavar="W",
                    help="calibrate's --prior-weight (default: calibrate's own, 0.02)")
    ap.add_argument("--params", metavar="LIST",
                    help="calibrate's --params (default: every parameter the traces constrain)")
    ap.add_argument("--no-machine-out", action="store_true",
                    help="skip leave-one-machine-out (a joint fit per machine of each class)")
    args = ap.parse_args()

    base = os.path.dirname(args.index)
    groups = OrderedDict()
    with open(args.index, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            trace, topo = line.rstrip("\n").split("\t")
            if args.only and topo not in args.only:
                continue
            groups.setdefault(topo, []).append(os.path.join(base, trace))

    def common():
        extra = []
        if args.prior_weight is not None:
            extra += ["--prior-weight", args.prior_weight]
        if args.params is not None:
            extra += ["--params", args.params]
        return extra

    def gpu_model(topo):
        """The class of a machine: the model of its first GPU, as calibrate names the GPU's
        component."""
        p = subprocess.run([args.collsim, "topo", "show", "--json", topo], capture_output=True,
                           text=True)
        if p.returncode != 0:
            return None
        for d in json.loads(p.stdout).get("devices", []):
            if d.get("kind") == "gpu":
                return d.get("model")
        return None

    def machines_out(members):
        """{trace path: leave-one-machine-out error} for the machines @members of one class."""
        cmd = [args.collsim, "calibrate", "--format", "json", "--leave-one-machine-out"]
        cmd += common()
        for topo in members:
            cmd += ["--topo", topo] + groups[topo]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=args.timeout * len(members) if args.timeout else None)
        except subprocess.TimeoutExpired:
            return {}
        if p.returncode != 0:
            return {}
        out = {}
        for m in json.loads(p.stdout)["machines"]:
            for t in m["traces"]:
                out[t["trace"]] = t.get("leave_one_machine_out_geomean_abs_busbw_error")
        return out

    def datasheet_error(topo, trace):
        v = subprocess.run([args.collsim, "validate", "--topo", topo, "--format", "json", trace],
                           capture_output=True, text=True)
        if v.returncode != 0:
            return None
        return json.loads(v.stdout)["traces"][0]["all"].get("geomean_abs_busbw_error")

    def machine(topo, traces):
        """The table rows of one machine's traces (path, topology, nodes, datasheet,
        calibrated, leave-one-out, note)."""
        cmd = [args.collsim, "calibrate", "--topo", topo, "--format", "json"] + traces
        cmd += common()
        if len(traces) >= 2:
            cmd.append("--leave-one-out")
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return [(t, topo, header(t, "nodes"), datasheet_error(topo, t),
                     None, None, "calibration not finished within %d s" % args.timeout)
                    for t in traces]
        if p.returncode != 0:
            # The datasheet error still stands; say why there is no fit.
            return [(t, topo, header(t, "nodes"), datasheet_error(topo, t),
                     None, None, "no fit: " + p.stderr.strip().splitlines()[-1])
                    for t in traces]
        result = json.loads(p.stdout)
        return [(t["trace"], topo, header(t["trace"], "nodes"),
                 t["datasheet_geomean_abs_busbw_error"], t["calibrated_geomean_abs_busbw_error"],
                 t.get("leave_one_out_geomean_abs_busbw_error"), "")
                for t in result["traces"]]

    classes = OrderedDict()
    if not args.no_machine_out:
        for topo in groups:
            classes.setdefault(gpu_model(topo) or topo, []).append(topo)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(machine, topo, traces) for topo, traces in groups.items()]
        out_futures = [pool.submit(machines_out, members) for members in classes.values()
                       if len(members) >= 2]
        rows = [row for f in futures for row in f.result()]
        lomo = {}
        for f in out_futures:
            lomo.update(f.result())
    rows = [r[:6] + (lomo.get(r[0]),) + r[6:] for r in rows]

    print("| trace | topology | nodes | datasheet | calibrated | leave-one-out "
          "| leave-one-machine-out |")
    print("|---|---|---|---|---|---|---|")
    for path, topo, nodes, ds, cal, loo, lmo, note in rows:
        print("| %s | %s | %s | %s | %s | %s | %s%s |"
              % (os.path.basename(path), topo, nodes or "?", pct(ds), pct(cal), pct(loo),
                 pct(lmo), (" " + note) if note else ""))
    for label, multi in (("single-node", False), ("multi-node", True)):
        sel = [r for r in rows if r[3] is not None and ((r[2] or "1").split()[0] != "1") == multi]
        if not sel:
            continue
        def mean(i):
            vals = [r[i] for r in sel if r[i] is not None]
            return sum(vals) / len(vals) if vals else None
        print("\n%s traces (%d): mean of the per-trace errors: datasheet %s, calibrated %s, "
              "leave-one-out %s, leave-one-machine-out %s"
              % (label, len(sel), pct(mean(3)), pct(mean(4)), pct(mean(5)), pct(mean(6))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
