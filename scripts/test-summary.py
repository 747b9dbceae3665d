#!/usr/bin/env python3
"""Counts test cases in meson testlog.json files: each TAP line of a TAP test, or the whole
test for exit-code tests. Prints 'N skipped', then, as the last line, the plain summary CI reads,
'N passed, N failed'; exits 1 if anything failed."""
import json
import re
import sys

TAP = re.compile(r"^(not ok|ok)\b(.*)$")

passed = failed = skipped = 0
args = sys.argv[1:]
if len(args) >= 2 and args[0] == "--build-failures":
    failed += int(args[1])  # a build that failed counts as one failed case
    args = args[2:]
for path in args:
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"{path}: {e.strerror}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        cases = []
        # meson's JSON log keeps each test's output under "stdout" (older releases "stdo");
        # a TAP test is recognised by its plan line.
        output = t.get("stdout") or t.get("stdo") or ""
        if re.search(r"^1\.\.\d+\s*$", output, re.M):
            for out in output.splitlines():
                m = TAP.match(out.strip())
                if not m:
                    continue
                rest = m.group(2)
                if m.group(1) == "not ok" and "# TODO" not in rest:
                    cases.append("fail")
                elif "# SKIP" in rest or "# skip" in rest:
                    cases.append("skip")
                else:
                    cases.append("pass")
        if not cases:
            cases = ["skip" if result == "SKIP" else "pass" if result in ("OK", "EXPECTEDFAIL")
                     else "fail"]
        elif result not in ("OK", "SKIP", "EXPECTEDFAIL") and "fail" not in cases:
            # A crash or timeout after the last TAP line still fails the test.
            cases.append("fail")
        passed += cases.count("pass")
        failed += cases.count("fail")
        skipped += cases.count("skip")

print(f"{skipped} skipped (tests that do not apply here: no GPU, no MPI in that build, ...)")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
