"""What a program whose calls stay on the CPU pays for tandem, whole process, first call included
(issue 39 item 3): bench/one_call run plain (OpenBLAS) and with libtandem_blas.so preloaded, in
turn, REPS times each, from an empty profile directory whose route (src/plan/route.hpp) the first
preloaded run records, and once more with no route (a fresh directory each run: every process
opens OpenCL). Prints the medians and their ratios to OpenBLAS, and one JSON line.

    python3 bench/process_cost.py ONE_CALL LIBTANDEM_BLAS [N] [REPS] [VAR=VALUE ...]

The VAR=VALUE settings apply to the preloaded runs (TANDEM_MIN_MNK=0: the drop-in sends even a
call below its own threshold through tandem, where the route then keeps it on the CPU)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

program, lib = sys.argv[1], sys.argv[2]
n = sys.argv[3] if len(sys.argv) > 3 else "300"
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 21
settings = dict(a.split("=", 1) for a in sys.argv[5:])
routed = tempfile.mkdtemp(prefix="tandem-route-")
base = {k: v for k, v in os.environ.items() if not k.startswith("TANDEM_")}
preloaded = dict(base, LD_PRELOAD=lib, **settings)
runs = {"openblas": [], "tandem_route": [], "tandem_no_route": []}


def once(env):
    start = time.perf_counter()
    subprocess.run([program, n], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


subprocess.run([program, n], env=dict(preloaded, TANDEM_PROFILE_DIR=routed),
               stdout=subprocess.DEVNULL, check=True)  # records the route
for _ in range(reps):
    runs["openblas"].append(once(base))
    runs["tandem_route"].append(once(dict(preloaded, TANDEM_PROFILE_DIR=routed)))
    runs["tandem_no_route"].append(
        once(dict(preloaded, TANDEM_PROFILE_DIR=tempfile.mkdtemp(prefix="tandem-"))))
medians = {k: statistics.median(v) for k, v in runs.items()}
for k, v in medians.items():
    print(f"{k:16s} median {v * 1e3:8.1f} ms  x{v / medians['openblas']:.2f} of OpenBLAS")
print(json.dumps({"n": int(n), "reps": reps, "settings": settings,
                  "route": open(os.path.join(routed, "routes.cache")).read().strip(),
                  **{k + "_ms": round(v * 1e3, 2) for k, v in medians.items()}}))
