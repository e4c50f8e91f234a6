#!/usr/bin/env python3
"""Where a batch call's time goes, from bench/batch_timeline's output under bench/cl_trace.c
(CL_TRACE_TIMELINE and CL_TRACE_PROFILE set): each call's line, then its OpenCL commands.

    python3 bench/batch_timeline.py OUTPUT.jsonl [--calls FILE.jsonl]

Per call, in microseconds on the host's clock (device times are put on it by the first command:
its QUEUED taken as its host entry, within a few microseconds on NVIDIA's driver):
  whole        the call's entry to its return
  before_first the call's entry to the first command's enqueue (checks, plan, the batch's set-up)
  to_device    the first command's enqueue to its start on the device
  device_span  the first command's start to the last command's end
  after_last   the last command's end to the call's return (the wait's wake-up, the teardown)
  writes, kernels, reads   the device's busy time in each kind (overlaps merged)
  idle         device_span less the union of every command's time (nothing on the device)
  commands     how many writes, launches and reads
Prints the median, 10th and 90th percentile of each over the calls of each case; --calls appends
every call's values as JSON lines.
"""
import argparse
import json
import statistics
import sys

KEYS = ["whole", "before_first", "to_device", "device_span", "after_last", "writes", "kernels",
        "reads", "idle", "commands"]
KIND = {"clEnqueueWriteBuffer": "writes", "clEnqueueWriteBufferRect": "writes",
        "clEnqueueNDRangeKernel": "kernels", "clEnqueueReadBuffer": "reads",
        "clEnqueueReadBufferRect": "reads"}


def union(intervals):
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def analyse(call, commands):
    timed = [c for c in commands if c.get("timeline") in KIND and c.get("start_us") is not None]
    whole = (call["call_return_ns"] - call["call_enter_ns"]) * 1e-3
    out = {"case": call["case"], "call": call["call"], "whole": whole}
    if not timed:
        return out
    base = next(c for c in commands if c.get("queued_us") is not None)
    # Host microseconds since the call's entry, for a command's host entry and for device times.
    host0 = base["host_enter_monotonic_ns"]
    to_host = (host0 - call["call_enter_ns"]) * 1e-3 - base["queued_us"]
    first = min(c["host_enter_monotonic_ns"] for c in commands)
    starts = [c["start_us"] + to_host for c in timed]
    ends = [c["end_us"] + to_host for c in timed]
    out["before_first"] = (first - call["call_enter_ns"]) * 1e-3
    out["to_device"] = min(starts) - out["before_first"]
    out["device_span"] = max(ends) - min(starts)
    out["after_last"] = whole - max(ends)
    for kind in ("writes", "kernels", "reads"):
        out[kind] = union([(c["start_us"], c["end_us"]) for c in timed if KIND[c["timeline"]] == kind])
    out["idle"] = out["device_span"] - union([(c["start_us"], c["end_us"]) for c in timed])
    out["commands"] = len(timed)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output")
    ap.add_argument("--calls")
    args = ap.parse_args()
    calls, current = [], None
    with open(args.output) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "timeline" in r and current is not None:
                current[1].append(r)
            elif "call" in r:
                current = (r, [])
                calls.append(current)
    rows = [analyse(c, cmds) for c, cmds in calls]
    if args.calls:
        with open(args.calls, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    print("| case | calls | " + " | ".join(KEYS) + " |")
    print("| --- | ---: |" + " ---: |" * len(KEYS))
    for case, rs in by_case.items():
        cells = []
        for k in KEYS:
            v = sorted(r[k] for r in rs if k in r)
            if not v:
                cells.append("")
                continue
            q = statistics.quantiles(v, n=10) if len(v) > 1 else [v[0]] * 9
            cells.append(f"{statistics.median(v):.0f} ({q[0]:.0f}-{q[8]:.0f})")
        print(f"| {case} | {len(rs)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
