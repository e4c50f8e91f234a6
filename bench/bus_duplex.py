#!/usr/bin/env python3
"""The bus between host and GPU, each way alone and both at once (issue 43's arithmetic).

    python3 bench/bus_duplex.py [MIB] [REPS]

Pinned host tensors of MIB MiB (default 1024) copied host to device, device to host, and both at
once on two CUDA streams; the best of REPS (default 5) after one warm-up, in GB/s each way.
One JSON line.
"""
import json
import sys
import time


def main():
    import torch
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    n = mib << 20
    host_in = torch.empty(n, dtype=torch.uint8).pin_memory()
    host_out = torch.empty(n, dtype=torch.uint8).pin_memory()
    dev_in = torch.empty(n, dtype=torch.uint8, device="cuda")
    dev_out = torch.empty(n, dtype=torch.uint8, device="cuda")
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def timed(f):
        best = 1e30
        for i in range(reps + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            if i > 0:
                best = min(best, time.perf_counter() - t0)
        return best

    def both():
        with torch.cuda.stream(s1):
            dev_in.copy_(host_in, non_blocking=True)
        with torch.cuda.stream(s2):
            host_out.copy_(dev_out, non_blocking=True)

    h2d = timed(lambda: dev_in.copy_(host_in, non_blocking=True))
    d2h = timed(lambda: host_out.copy_(dev_out, non_blocking=True))
    duplex = timed(both)
    gb = n / 1e9
    print(json.dumps({"bytes": n, "h2d_GBps": gb / h2d, "d2h_GBps": gb / d2h,
                      "both_each_way_GBps": gb / duplex}))


if __name__ == "__main__":
    main()
