#!/usr/bin/env python3
"""cuBLAS's strided batched GEMM through PyTorch (torch.bmm) for bench/batch_bench's cases.

    python3 bench/cublas_batch.py CASES REPS        e.g. s:64:20000,d:256:2000 7

CASES: PRECISION:N:COUNT (s float32, d float64, c complex64, z complex128), row-major
C_i = A_i B_i, inputs uniform in [-1, 1] (complex: both parts, drawn apart), TF32 off. Each case is
timed two ways, medians of REPS after two warm-ups: host to host from pinned memory (A and B copied
in, bmm, C copied back, by the wall clock until C is back; the device buffers made once) and on the
device alone (bmm between a pair of CUDA events). The last host-to-host call starts from a C of NaN
and three problems are checked against numpy in float64 (c and z: complex128), max |C - C_ref| /
(N eps) below 4, |C - C_ref| a complex magnitude and eps that of float32 (s, c) or float64 (d, z).
One JSON line per case, the same fields for every precision (whoever reads it counts the flops: a
complex product's are four times a real one's); exit status 1 if a check failed.
"""
import json
import math
import os
import statistics
import sys
import time

os.environ["NVIDIA_TF32_OVERRIDE"] = "0"


def main():
    import numpy as np
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = sys.argv[1] if len(sys.argv) > 1 else "s:64:2000"
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    failed = False
    for item in cases.split(","):
        p, n, count = item.split(":")
        n, count = int(n), int(count)
        real = {"s": torch.float32, "d": torch.float64, "c": torch.float32, "z": torch.float64}[p]
        dtype = {"s": real, "d": real, "c": torch.complex64, "z": torch.complex128}[p]
        wide = np.complex128 if dtype.is_complex else np.float64
        eps = float(np.finfo(np.float32 if real == torch.float32 else np.float64).eps)
        dev = torch.device("cuda")
        gen = torch.Generator(device=dev)
        gen.manual_seed(n * 7 + count)

        def part():
            return torch.rand((count, n, n), dtype=real, device=dev, generator=gen) * 2 - 1

        def uniform():
            # A complex operand's parts drawn one by one in the real type (real part first):
            # torch.rand of a complex dtype draws both in [0, 1), and * 2 - 1 moves the real only.
            return torch.complex(part(), part()) if dtype.is_complex else part()

        a = uniform()
        b = uniform()
        c = torch.empty((count, n, n), dtype=dtype, device=dev)
        host = [x.cpu().pin_memory() for x in (a, b, c)]

        def host_to_host():
            a.copy_(host[0], non_blocking=True)
            b.copy_(host[1], non_blocking=True)
            torch.bmm(a, b, out=c)
            host[2].copy_(c, non_blocking=True)

        for _ in range(2):
            host_to_host()
        torch.cuda.synchronize()
        pinned, device = [], []
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        for i in range(reps):
            if i == reps - 1:
                host[2].fill_(float("nan"))
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            host_to_host()
            torch.cuda.synchronize()
            pinned.append(time.perf_counter() - t0)
            start.record()
            torch.bmm(a, b, out=c)
            end.record()
            torch.cuda.synchronize()
            device.append(start.elapsed_time(end) * 1e-3)
        worst = 0.0
        for i in (0, count // 2, count - 1):
            want = host[0][i].numpy().astype(wide) @ host[1][i].numpy().astype(wide)
            got = host[2][i].numpy().astype(wide)
            e = float(np.max(np.abs(got - want))) / (n * eps)
            if not math.isnan(worst) and not e <= worst:  # a NaN stays, and fails the check
                worst = e
        ok = bool(np.isfinite(worst) and worst < 4)
        failed = failed or not ok
        print(json.dumps({"precision": p, "n": n, "count": count, "reps": reps,
                          "cublas_pinned_s": statistics.median(pinned),
                          "cublas_device_s": statistics.median(device),
                          "check_error": worst, "check_ok": ok}), flush=True)
        del a, b, c, host
        torch.cuda.empty_cache()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
