#!/usr/bin/env python3
"""cuBLAS on the repeated-operand case of issue 44, through PyTorch (TF32 off): bench/resident_bench's
ceiling.

    python3 bench/cublas_resident.py [--precision s|d] [--m 8192] [--n 1024] [--k 8192] [--count 8]
                                     [--reps 7] [--memory pageable|pinned]

C_i = A B_i for i = 1..count, A (m x k) on the device, copied there once before the timing (a
device-resident operand); each B_i (k x n) and C_i (m x n) in host memory, ordinary (pageable) or
page-locked (pinned): B_i copied in, the product, C_i copied back, the count of them timed together
by the wall clock until the last C_i is back. Medians of --reps rounds after one warm-up round.
The last C is checked on 64 sampled elements against a float64 dot product on the CPU (the bound
bench/resident_bench uses). Prints the time, GFLOPS = 2 m n k count / s / 1e9, and "checked".
Exit status 1 if a check failed.
"""
import argparse
import os
import statistics
import sys
import time

os.environ["NVIDIA_TF32_OVERRIDE"] = "0"  # before torch loads cuBLAS

import numpy as np  # noqa: E402
import torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", default="s", choices=["s", "d"])
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--memory", default="pageable", choices=["pageable", "pinned"])
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dtype = torch.float32 if args.precision == "s" else torch.float64
    m, n, k, count = args.m, args.n, args.k, args.count
    pin = args.memory == "pinned"
    gen = torch.Generator().manual_seed(44)

    def host(rows, cols):
        t = torch.rand(rows, cols, generator=gen, dtype=dtype) - 0.5
        return t.pin_memory() if pin else t

    a_host = host(m, k)
    a = a_host.to("cuda")  # resident: copied once, before the timing
    bs = [host(k, n) for _ in range(count)]
    cs = [torch.empty(m, n, dtype=dtype).pin_memory() if pin else torch.empty(m, n, dtype=dtype)
          for _ in range(count)]
    b_dev = torch.empty(k, n, dtype=dtype, device="cuda")
    c_dev = torch.empty(m, n, dtype=dtype, device="cuda")

    def one_round():
        t0 = time.perf_counter()
        for b, c in zip(bs, cs):
            b_dev.copy_(b, non_blocking=pin)
            torch.matmul(a, b_dev, out=c_dev)
            c.copy_(c_dev, non_blocking=pin)
        torch.cuda.synchronize()
        return time.perf_counter() - t0

    one_round()
    times = [one_round() for _ in range(args.reps)]
    med = statistics.median(times)
    # The last product on 64 sampled elements.
    an, bn, cn = a_host.numpy().astype(np.float64), bs[-1].numpy().astype(np.float64), cs[-1].numpy()
    eps = 6e-8 if args.precision == "s" else 1.2e-16
    rng = np.random.default_rng(1)
    ok = True
    for _ in range(64):
        i, j = int(rng.integers(m)), int(rng.integers(n))
        x = an[i, :] * bn[:, j]
        want, bound = x.sum(), np.abs(x).sum()
        if not abs(float(cn[i, j]) - want) <= 2 * k * eps * bound + 1e-30:
            ok = False
            print(f"C[{i},{j}] = {cn[i, j]!r}, want {want!r}")
    gflops = 2.0 * m * n * k * count / med / 1e9
    print(f"cuBLAS {args.precision} C_i = A B_i, i = 1..{count}, m={m} n={n} k={k}, A on the device, "
          f"B_i and C_i in {args.memory} memory: {med:.4f} s, {gflops:.1f} GFLOPS "
          f"(min {min(times):.4f} max {max(times):.4f}); {'checked' if ok else 'CHECK FAILED'}; "
          f"{torch.cuda.get_device_name()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
