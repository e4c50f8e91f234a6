#!/usr/bin/env bash
# Batches on the GPU host (issue 43), from the repo root there after unpacking the bundle
# (`bash bench/vs_clblast.sh pack` here; ../shared/gpu-host/README.md):
#
#   bash bench/batch_host.sh [OUT]
#
# Runs, in turn, for BATCH_CASES (PRECISION:N:COUNT, default the issue's targets and a few grid
# points) and BATCH_REPS (default 5): batch_bench in its devices mode (the OpenBLAS loop, tandem's
# batch under cpu, gpu, hybrid and auto from ordinary memory, gpu and hybrid from tandem_malloc
# memory), CLBlast's strided batched GEMM host to host from pinned memory (clblast_batch) and
# cuBLAS's (bench/cublas_batch.py, torch.bmm); then batch_bench again with each of
# BATCH_FEEDERS (default "2 4", empty for none: feeder threads per device) on
# BATCH_FEEDER_CASES; and the bus each way and both at once (bench/bus_duplex.py) and the host's
# memory bandwidth (host_bandwidth). Every side's results are checked. Writes OUT/devices.txt,
# OUT/clblast.jsonl, OUT/cublas.jsonl, OUT/feeders-N.txt, OUT/bus.json and OUT/bandwidth.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/batch-out}}
mkdir -p "$out"
cases=${BATCH_CASES:-s:64:20000,d:64:20000,s:256:2000,d:256:2000,s:16:100000,s:32:20000,s:128:5000,s:512:200,s:1024:20,d:1024:20,s:64:10}
reps=${BATCH_REPS:-5}
bin=/tmp/bundle/bin
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
python3 bench/bus_duplex.py > "$out/bus.json" 2>&1 || true
"$bin/host_bandwidth" 1,4,8,16 > "$out/bandwidth.jsonl" 2>&1 || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" || true
"$bin/batch_bench" "$cases" "$reps" devices > "$out/devices.txt" 2> "$out/devices.err" || echo "batch_bench failed: $?" >> "$out/devices.err"
"$bin/clblast_batch" "$cases" "$reps" NVIDIA > "$out/clblast.jsonl" 2> "$out/clblast.err" || echo "clblast_batch failed: $?" >> "$out/clblast.err"
python3 bench/cublas_batch.py "$cases" "$reps" > "$out/cublas.jsonl" 2> "$out/cublas.err" || echo "cublas_batch failed: $?" >> "$out/cublas.err"
for f in ${BATCH_FEEDERS-2 4}; do
  BENCH_FEEDERS=$f "$bin/batch_bench" "${BATCH_FEEDER_CASES:-s:64:20000,s:256:2000}" "$reps" devices \
    > "$out/feeders-$f.txt" 2>&1 || true
done
