#!/usr/bin/env python3
"""The matrix-engine sweep's table: each parameter set of bench/engine_host.sh against cuBLAS.

    python3 bench/engine_table.py SWEEP_FILE OUT_DIR

Reads OUT_DIR/sweep-N.json (vs_clblast, one per line of SWEEP_FILE in order) and
OUT_DIR/cublas.json. One row per parameter set, one GFLOPS column per case and column run
(FAILED for a failed check, "error" for a cell that raised), then each cell over cuBLAS's.
"""
import json
import os
import sys

from vs_clblast_table import cell, load, rate, ratio


def main():
    sweep_file, out = sys.argv[1], sys.argv[2]
    lines = []
    with open(sweep_file, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].replace(" ", "").strip()
            if line:
                lines.append(line)
    cu = load(os.path.join(out, "cublas.json")) or {}
    cublas = {c["name"]: c.get("results", {}).get("cublas") for c in cu.get("cases", [])}
    rows, headers = [], []
    for n, kernel in enumerate(lines, start=1):
        vs = load(os.path.join(out, f"sweep-{n}.json")) or {}
        cells = {}
        for case in vs.get("cases", []):
            for column, result in case.get("results", {}).items():
                key = (case["name"], column)
                if key not in headers:
                    headers.append(key)
                cells[key] = result
        rows.append((kernel, cells))
    print("# The matrix-engine codelet's parameter sets (GFLOPS; x cuBLAS)\n")
    head = ["parameters"] + [f"{case} {column}" for case, column in headers]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for kernel, cells in rows:
        out_cells = []
        for case, column in headers:
            result = cells.get((case, column))
            out_cells.append(f"{cell(result)} ({ratio(rate(result), rate(cublas.get(case)))})")
        print(f"| {kernel} | " + " | ".join(out_cells) + " |")
    print("\n| case | cuBLAS |\n| --- | --- |")
    for case, result in cublas.items():
        print(f"| {case} | {cell(result)} |")


if __name__ == "__main__":
    main()
