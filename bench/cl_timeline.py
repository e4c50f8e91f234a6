#!/usr/bin/env python3
"""Where one small GEMM call's time goes on the device and on the host, from bench/cl_trace.c's
timeline (CL_TRACE_TIMELINE=N): tandem's call_phases and vs_clblast's clblast_pinned column alike.

    python3 bench/cl_timeline.py [--calls FILE.jsonl] TRACE.txt [TRACE.txt ...]

A call is its writes, its kernel launches and the read of C, up to the wait that returns C (a
blocking read, or a clWaitForEvents after the read). Per call, in microseconds:
  latency_w1     the first write's enqueue to its start on the device
  w1, w2         the two writes on the device; gap_w between them
  gap_wk         the last write's end to the (last) kernel's start; kernel its device time
  gap_kr         the kernel's end to the read's start; read the read on the device
  ret_after_read the read's end to the return of the wait that gives C to the host
  device_span    the first write's start to the read's end
  first_write_to_return   the first write's enqueue to that return
  between_calls  the previous call's return to this call's first write (the host's own time:
                 the rest of the previous call, the caller's loop, and this call's set-up)
  enq_w1, enq_k  the host time of the first write's and the kernel's enqueue calls
Device times come from the queue's profiling (QUEUED/START/END), put on the host's axis by the
first write (its QUEUED against its host entry; within about 2.5 us on NVIDIA's driver). Prints
the median, 10th and 90th percentile of each over the calls of each file; --calls appends every
call's values as JSON lines (with the file's name) to FILE.
"""
import argparse
import json
import statistics
import sys

KEYS = ["enq_w1", "latency_w1", "w1", "gap_w", "w2", "gap_wk", "kernel", "enq_k", "gap_kr",
        "read", "ret_after_read", "device_span", "first_write_to_return", "between_calls"]


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith('{"timeline"')]


def calls(recs):
    out, cur = [], None
    for r in recs:
        f = r["timeline"]
        if f.startswith("clEnqueueWriteBuffer"):
            if cur is None or cur.get("done"):
                prev = cur.get("end_host") if cur else None
                cur = {"writes": [], "kernels": [], "prev_end": prev}
                out.append(cur)
            cur["writes"].append(r)
        elif cur is None:
            continue
        elif f == "clEnqueueNDRangeKernel":
            cur["kernels"].append(r)
        elif f.startswith("clEnqueueReadBuffer"):
            cur["read"] = r
            if r["blocking"]:
                cur["end_host"], cur["done"] = r["host_return_us"], True
        elif f == "clWaitForEvents" and "read" in cur and not cur.get("done"):
            cur["end_host"], cur["done"] = r["host_return_us"], True
    return [c for c in out if c.get("done") and c["kernels"] and len(c["writes"]) >= 2
            and c["writes"][0]["start_us"] is not None]


def segments(c):
    w, k, r = c["writes"], c["kernels"][-1], c["read"]
    to_host = w[0]["host_enter_us"] - w[0]["queued_us"]
    s = {
        "enq_w1": w[0]["host_return_us"] - w[0]["host_enter_us"],
        "latency_w1": w[0]["start_us"] - w[0]["queued_us"],
        "w1": w[0]["end_us"] - w[0]["start_us"],
        "gap_w": w[1]["start_us"] - w[0]["end_us"],
        "w2": w[1]["end_us"] - w[1]["start_us"],
        "gap_wk": k["start_us"] - w[-1]["end_us"],
        "kernel": k["end_us"] - k["start_us"],
        "enq_k": k["host_return_us"] - k["host_enter_us"],
        "gap_kr": r["start_us"] - k["end_us"],
        "read": r["end_us"] - r["start_us"],
        "ret_after_read": c["end_host"] - (r["end_us"] + to_host),
        "device_span": r["end_us"] - w[0]["start_us"],
        "first_write_to_return": c["end_host"] - w[0]["host_enter_us"],
    }
    if c["prev_end"] is not None:
        s["between_calls"] = w[0]["host_enter_us"] - c["prev_end"]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--calls", help="append every call's segments here, as JSON lines")
    args = ap.parse_args()
    for path in args.traces:
        per_call = [segments(c) for c in calls(records(path))]
        print(f"{path}: {len(per_call)} calls")
        if args.calls:
            with open(args.calls, "a") as out:
                for s in per_call:
                    out.write(json.dumps({"trace": path, **{k: round(v, 3) for k, v in s.items()}})
                              + "\n")
        for key in KEYS:
            v = sorted(s[key] for s in per_call if key in s)
            if v:
                print(f"  {key:22s} median {statistics.median(v):7.1f}  "
                      f"p10 {v[len(v) // 10]:7.1f}  p90 {v[9 * len(v) // 10]:7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
