#!/usr/bin/env python3
"""cuBLAS GEMM rates through PyTorch for bench/vs_clblast's cases: the ceiling column.

    python3 bench/cublas.py [--cases s:4096:4096:4096,...] [--reps 7] [--warmup 2] [--json FILE]
                            [--memory device|pinned|pageable]

Row-major C = A B (float32 for "s", float64 for "d", complex64 for "c", complex128 for "z"),
inputs uniform in [-1, 1] (both parts of a complex one), operands on the GPU; TF32 is off (true
FP32). Each timed call is bracketed by a pair of torch.cuda.Event; the figure is the median in
GFLOPS = 2MNK / s / 1e9, 8MNK for c and z (min and max in the JSON). The last timed call
runs on a C filled with NaN and is checked on up to 64 sampled rows against numpy float64 on the
CPU: max |C - C_ref| / (K max|A| max|B| eps) must be below --tol, as in vs_clblast.

--memory: where A, B and C live. device (the default): on the GPU, the kernel timed by events.
pinned or pageable: in host memory (page-locked, or ordinary), each timed call host to host as a
drop-in's would be: A and B copied in, the product, C copied back, timed by the wall clock from
the first copy until C is back; the device buffers are made once, before the warm-up.
Exit status: 1 if a check failed, 2 if a case raised (and none failed), else 0.
"""
import argparse
import datetime
import json
import math
import os
import shlex
import statistics
import time
import sys

# Environment-level TF32 switch of NVIDIA's libraries: "0" disables TF32 whatever the framework
# asks for. Set before torch loads cuBLAS.
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"

DEFAULT_CASES = ("s:4096:4096:4096,s:8192:8192:8192,d:4096:4096:4096,s:4097:4097:4097,"
                 "s:8192:8192:256,s:256:8192:8192,s:100:8192:8192,d:4097:4097:4097")


def parse_cases(text):
    """'s:M:N:K,d:M:N:K' -> [('s', M, N, K), ...] (the syntax of vs_clblast --cases)."""
    cases = []
    for item in text.split(","):
        item = "".join(item.split())
        if not item:
            continue
        f = item.split(":")
        if len(f) != 4 or f[0] not in ("s", "d", "c", "z") or not all(x.isdigit() for x in f[1:]):
            raise ValueError(f"case '{item}': expected s|d|c|z:M:N:K")
        m, n, k = (int(x) for x in f[1:])
        if min(m, n, k) <= 0:
            raise ValueError(f"case '{item}': dimensions must be positive")
        cases.append((f[0], m, n, k))
    if not cases:
        raise ValueError("no cases")
    return cases


def case_name(case):
    p, m, n, k = case
    return f"{p} {m}x{n}x{k}"


def gflop(p, m, n, k):
    """A real multiply-add counts 2 flops, a complex one 8."""
    return (8.0 if p in ("c", "z") else 2.0) * m * n * k * 1e-9


def check_error(np, c_rows, ref_rows, k, max_a, max_b, eps):
    """max |C - C_ref| / (K max|A| max|B| eps) over the given rows; inf if C holds a NaN."""
    c_rows = np.asarray(c_rows, dtype=np.complex128)
    ref_rows = np.asarray(ref_rows, dtype=np.complex128)
    if c_rows.shape != ref_rows.shape:
        raise ValueError(f"shape {c_rows.shape} against {ref_rows.shape}")
    if not np.all(np.isfinite(c_rows)):
        return math.inf
    return float(np.max(np.abs(c_rows - ref_rows))) / (k * max_a * max_b * eps)


def sample_rows(np, m, count, seed):
    """Up to `count` distinct rows of m, always the first and the last, sorted."""
    rows = {0, m - 1}
    rng = np.random.default_rng(seed)
    for r in rng.permutation(m):
        if len(rows) >= count:
            break
        rows.add(int(r))
    return sorted(rows)


def summarize(seconds, gf):
    med = statistics.median(seconds)
    return {"seconds": seconds, "median": med, "min": min(seconds), "max": max(seconds),
            "gflops": gf / med, "gflops_best": gf / min(seconds), "gflops_worst": gf / max(seconds)}


def cell(result):
    if result is None:
        return "-"
    if "error" in result:
        return "error: " + result["error"].replace("|", " ").replace("\n", " ")[:60]
    if not result.get("check_ok", False):
        err = result.get("check_error")
        return f"FAILED (err {err:.3g})" if isinstance(err, float) else f"FAILED (err {err})"
    return f"{result['gflops']:.1f}"


def markdown(cases_out, reps, tol):
    lines = [f"## cuBLAS (PyTorch, TF32 off), GFLOPS (median of {reps})", "",
             f"| case | cuBLAS | min..max | check (< {tol:g}) |", "| --- | ---: | ---: | ---: |"]
    for c in cases_out:
        r = c["results"].get("cublas")
        span = (f"{r['gflops_worst']:.1f}..{r['gflops_best']:.1f}"
                if r is not None and "gflops" in r else "-")
        err = r.get("check_error", "-") if r is not None else "-"
        err = f"{err:.3g}" if isinstance(err, float) else str(err)
        lines.append(f"| {c['name']} | {cell(r)} | {span} | {err} |")
    return "\n".join(lines)


def run_case(torch, np, case, reps, warmup, seed, tol, memory="device"):
    p, m, n, k = case
    dtype = {"s": torch.float32, "d": torch.float64, "c": torch.complex64,
             "z": torch.complex128}[p]
    eps = float(np.finfo(np.float32 if p in ("s", "c") else np.float64).eps)
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    # torch.rand draws both parts of a complex element uniformly in [0, 1).
    one = 1 + 1j if p in "cz" else 1
    a = torch.rand((m, k), dtype=dtype, device=dev, generator=gen) * 2 - one
    b = torch.rand((k, n), dtype=dtype, device=dev, generator=gen) * 2 - one
    c = torch.empty((m, n), dtype=dtype, device=dev)
    host = None
    if memory != "device":
        pin = memory == "pinned"
        host = [x.cpu().pin_memory() if pin else x.cpu() for x in (a, b, c)]

    def once():
        if host is None:
            torch.mm(a, b, out=c)
            return
        a.copy_(host[0], non_blocking=True)
        b.copy_(host[1], non_blocking=True)
        torch.mm(a, b, out=c)
        host[2].copy_(c, non_blocking=True)

    try:
        for _ in range(warmup):
            once()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        seconds = []
        for i in range(reps):
            if i == reps - 1:
                c.fill_(float("nan"))  # beta = 0 must overwrite it: the checked call
                if host is not None:
                    host[2].fill_(float("nan"))
            torch.cuda.synchronize()
            if host is None:
                start.record()
                once()
                end.record()
                torch.cuda.synchronize()
                seconds.append(start.elapsed_time(end) * 1e-3)  # ms -> s
            else:
                t0 = time.perf_counter()
                once()
                torch.cuda.synchronize()
                seconds.append(time.perf_counter() - t0)
        if host is not None:
            c.copy_(host[2])  # the check reads what came back to the host
        rows = sample_rows(np, m, 64, seed + 7)
        idx = torch.tensor(rows, device=dev, dtype=torch.long)
        wide = np.complex128 if p in "cz" else np.float64
        a_rows = a.index_select(0, idx).cpu().numpy().astype(wide)
        b64 = b.cpu().numpy().astype(wide)
        c_rows = c.index_select(0, idx).cpu().numpy()
        max_a = float(a.abs().max().item())
        max_b = float(b.abs().max().item())
        err = check_error(np, c_rows, a_rows @ b64, k, max_a, max_b, eps)
        out = summarize(seconds, gflop(p, m, n, k))
        out["check_error"] = err if math.isfinite(err) else "inf"
        out["check_ok"] = err < tol
        out["extra"] = {"rows_checked": len(rows), "dtype": str(dtype)}
        return out
    finally:
        del a, b, c
        torch.cuda.empty_cache()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated s|d|c|z:M:N:K")
    ap.add_argument("--reps", type=int, default=7, help="timed calls per case (median)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed calls before them")
    ap.add_argument("--json", help="write every sample to this file")
    ap.add_argument("--tol", type=float, default=16.0,
                    help="check tolerance, in units of K*max|A|*max|B|*eps")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--memory", choices=("device", "pinned", "pageable"), default="device",
                    help="operands on the GPU, or host to host from pinned or pageable memory")
    args = ap.parse_args(argv)
    if args.reps < 1 or args.warmup < 0:
        ap.error("--reps must be >= 1 and --warmup >= 0")
    cases = parse_cases(args.cases)

    import numpy as np
    import torch

    if not torch.cuda.is_available():
        print("cublas.py: torch sees no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(torch, "set_float32_matmul_precision"):
        torch.set_float32_matmul_precision("highest")

    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    cmd = " ".join(shlex.quote(x) for x in [sys.argv[0]] + (sys.argv[1:] if argv is None else argv))
    device = torch.cuda.get_device_name(0)
    print("# cuBLAS through PyTorch\n")
    print(f"- date: {date}")
    print(f"- command: `{cmd}`")
    print(f"- device: {device}; torch {torch.__version__}, CUDA {torch.version.cuda}")
    print(f"- TF32 off: allow_tf32 {torch.backends.cuda.matmul.allow_tf32}, NVIDIA_TF32_OVERRIDE="
          f"{os.environ.get('NVIDIA_TF32_OVERRIDE')}")
    print(f"- memory: {args.memory}")
    print(f"- reps {args.reps} after {args.warmup} warm-up calls; check tolerance {args.tol:g}\n",
          flush=True)

    cases_out, failed, errors = [], 0, 0
    for case in cases:
        p, m, n, k = case
        entry = {"name": case_name(case), "precision": p, "m": m, "n": n, "k": k,
                 "gflop": gflop(p, m, n, k), "results": {}}
        try:
            r = run_case(torch, np, case, args.reps, args.warmup, args.seed, args.tol,
                         args.memory)
            failed += 0 if r["check_ok"] else 1
        except Exception as e:  # noqa: BLE001 - report per case and go on
            r = {"error": f"{type(e).__name__}: {e}"}
            errors += 1
        entry["results"]["cublas"] = r
        cases_out.append(entry)
        print(f"{entry['name']}: {cell(r)}", file=sys.stderr, flush=True)

    print(markdown(cases_out, args.reps, args.tol))
    print(f"\n{failed} failed check(s), {errors} error(s)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"program": "cublas.py", "date_utc": date, "command_line": cmd,
                       "device": device, "torch": torch.__version__, "cuda": torch.version.cuda,
                       "memory": args.memory, "reps": args.reps, "warmup": args.warmup,
                       "tolerance": args.tol,
                       "seed": args.seed, "cases": cases_out}, f, indent=1)
            f.write("\n")
    return 1 if failed else 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
