#!/usr/bin/env python3
"""Two builds of tandem side by side: vs_clblast's JSON files from runs taken in turn, each build's
rate per case and column, and whether they differ beyond the runs' spread.

    python3 bench/before_after.py OUT_DIR    # reads OUT_DIR/before-r*.json and after-r*.json

Per case and column: each build's per-run medians (GFLOPS), their median, and their range
(lowest to highest run); the ratio after / before of the medians; and "same" where the two ranges
overlap (the builds cannot be told apart by these runs), else "faster" or "slower". Only passing
cells count. CLBlast's and OpenBLAS's columns, the same code in both builds, show the machine's
own drift between runs.
"""
import glob
import json
import math
import os
import statistics
import sys


def runs(out, build):
    found = []
    for path in sorted(glob.glob(os.path.join(out, f"{build}-r*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                found.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"before_after: cannot read {path}: {e}", file=sys.stderr)
    return found


def rates(build_runs):
    """{(case, column): [GFLOPS of each run's median]} over passing cells."""
    out = {}
    for run in build_runs:
        for case in run.get("cases", []):
            for column, r in case.get("results", {}).items():
                if r.get("check_ok") and "gflops" in r and math.isfinite(r["gflops"]):
                    out.setdefault((case["name"], column), []).append(r["gflops"])
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    before, after = rates(runs(out, "before")), rates(runs(out, "after"))
    if not before or not after:
        print("before_after: no passing runs of one build", file=sys.stderr)
        return 1
    print("| case | column | before GFLOPS (runs) | after GFLOPS (runs) | after / before | verdict |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    apart = 0
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key, []), after.get(key, [])
        if not b or not a:
            print(f"| {key[0]} | {key[1]} | {len(b)} runs | {len(a)} runs | - | missing |")
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        if max(a) < min(b):
            verdict = "slower"
        elif min(a) > max(b):
            verdict = "faster"
        else:
            verdict = "same"
        apart += verdict != "same"
        span = lambda v: f"{statistics.median(v):,.0f} ({min(v):,.0f}-{max(v):,.0f}, {len(v)})"
        print(f"| {key[0]} | {key[1]} | {span(b)} | {span(a)} | {ma / mb:.3f} | {verdict} |")
    print(f"\n{apart} cell(s) with ranges apart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
