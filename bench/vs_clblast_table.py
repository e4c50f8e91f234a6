#!/usr/bin/env python3
"""Merge vs_clblast's JSON and cublas.py's JSON into one markdown table, cuBLAS as the ceiling.

    python3 bench/vs_clblast_table.py VS_CLBLAST_JSON [CUBLAS_JSON]

A missing, unreadable or empty cuBLAS file leaves its column as "-". Cells show GFLOPS (median);
FAILED for a failed check, "error" for a measurement that raised; ratios use passing cells only.
"""
import json
import math
import sys

# (key, header): the order of the merged table. "cublas" comes from cublas.py, the rest from
# vs_clblast.
COLUMNS = [
    ("cublas", "cuBLAS (ceiling)"),
    ("clblast_device", "CLBlast device"),
    ("tandem_kernel", "tandem kernel"),
    ("clblast_pageable", "CLBlast pageable"),
    ("tandem_gpu_pageable", "tandem gpu std::vector"),
    ("clblast_pinned", "CLBlast pinned"),
    ("tandem_gpu_pinned", "tandem gpu tandem_malloc"),
    ("openblas", "OpenBLAS"),
    ("tandem_auto", "tandem auto std::vector"),
    ("tandem_hybrid_pinned", "tandem auto tandem_malloc"),
]


def load(path):
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"vs_clblast_table: cannot read {path}: {e}", file=sys.stderr)
        return None


def rate(result):
    """GFLOPS of a passing cell, else None."""
    if not result or "error" in result or not result.get("check_ok") or "gflops" not in result:
        return None
    return result["gflops"]


def cell(result):
    if result is None:
        return "-"
    if "error" in result:
        return "error"
    if not result.get("check_ok"):
        return "FAILED"
    return f"{result['gflops']:.1f}" if "gflops" in result else "-"


def ratio(num, den, fmt="{:.2f}"):
    if num is None or den is None or den == 0 or not math.isfinite(num / den):
        return "-"
    return fmt.format(num / den)


def merge(vs, cu):
    """{case name: {column: result}} in vs_clblast's case order, then cuBLAS-only cases."""
    order, rows = [], {}
    for src in (vs, cu):
        for case in (src or {}).get("cases", []):
            name = case["name"]
            if name not in rows:
                order.append(name)
                rows[name] = {}
            rows[name].update(case.get("results", {}))
    return order, rows


def table(vs, cu):
    order, rows = merge(vs, cu)
    out = ["# GEMM: tandem against cuBLAS, CLBlast and OpenBLAS", ""]
    if vs:
        dev = vs.get("opencl_device", {})
        out.append(f"- vs_clblast: {vs.get('date_utc', '?')}, OpenCL device "
                   f"{dev.get('platform', '?')} / {dev.get('name', dev.get('error', '?'))}, "
                   f"driver {dev.get('driver', '?')}; reps {vs.get('reps')} after "
                   f"{vs.get('warmup')} warm-up calls")
    if cu:
        out.append(f"- cublas.py: {cu.get('date_utc', '?')}, {cu.get('device', '?')}, torch "
                   f"{cu.get('torch', '?')}, CUDA {cu.get('cuda', '?')}, TF32 off; reps "
                   f"{cu.get('reps')}")
    else:
        out.append("- cublas.py: no results")
    out += ["", "GFLOPS, median (FAILED: check failed; error: the measurement raised; -: not run)",
            "", "| case | " + " | ".join(h for _, h in COLUMNS) + " |",
            "| --- |" + " ---: |" * len(COLUMNS)]
    for name in order:
        r = rows[name]
        out.append(f"| {name} | " + " | ".join(cell(r.get(k)) for k, _ in COLUMNS) + " |")

    out += ["", "| case | tandem kernel / cuBLAS | CLBlast device / cuBLAS | tandem kernel / "
            "CLBlast device | tandem gpu / CLBlast, pageable | tandem gpu / CLBlast, pinned | "
            "auto / max(cpu, gpu) | hybrid gain | auto / max(cpu, gpu), tandem_malloc | "
            "hybrid gain, tandem_malloc |",
            "| --- |" + " ---: |" * 9]
    for name in order:
        g = {k: rate(v) for k, v in rows[name].items()}
        cpu, gpu, au = g.get("openblas"), g.get("tandem_gpu_pageable"), g.get("tandem_auto")
        best = max(cpu, gpu) if cpu is not None and gpu is not None else None
        worst = min(cpu, gpu) if cpu is not None and gpu is not None else None
        gain = ratio(au - best, worst, "{:+.3f}") if au is not None and best is not None else "-"
        # The same on tandem_malloc memory: auto there against the GPU alone there.
        gpu_r, au_r = g.get("tandem_gpu_pinned"), g.get("tandem_hybrid_pinned")
        best_r = max(cpu, gpu_r) if cpu is not None and gpu_r is not None else None
        worst_r = min(cpu, gpu_r) if cpu is not None and gpu_r is not None else None
        gain_r = ratio(au_r - best_r, worst_r, "{:+.3f}") if au_r is not None and best_r is not None else "-"
        out.append(f"| {name} | {ratio(g.get('tandem_kernel'), g.get('cublas'))} | "
                   f"{ratio(g.get('clblast_device'), g.get('cublas'))} | "
                   f"{ratio(g.get('tandem_kernel'), g.get('clblast_device'))} | "
                   f"{ratio(gpu, g.get('clblast_pageable'))} | "
                   f"{ratio(g.get('tandem_gpu_pinned'), g.get('clblast_pinned'))} | "
                   f"{ratio(au, best)} | {gain} | {ratio(au_r, best_r)} | {gain_r} |")
    out += ["", "cpu = OpenBLAS, gpu = tandem gpu from std::vector (tandem_malloc memory in the last "
            "two columns); hybrid gain = (auto - max(cpu, gpu)) / min(cpu, gpu). tandem kernel is OpenCL profiling time of tandem's kernel, "
            "cuBLAS is CUDA event time, CLBlast device is wall time of the call plus clFinish."]
    return "\n".join(out)


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    vs = load(argv[1])
    cu = load(argv[2]) if len(argv) == 3 else None
    if vs is None and cu is None:
        return 1
    print(table(vs, cu))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
