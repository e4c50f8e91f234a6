#!/usr/bin/env bash
# The matrix-engine codelet (kernels/gemm_engine.cl, KERNEL 3) on the GPU host, in one run:
#
#   bash bench/vs_clblast.sh pack          # here: the bundle (it holds every program used below)
#   bash bench/engine_host.sh [OUT]        # there, from the repo root: the sweep below
#   bash bench/engine_host.sh measure [OUT]  # there: the issue's figures, with the built-in profile
#
# measure: bench/vs_clblast.sh run at MEASURE_CASES (default dgemm 8192^3 and 4096^3, sgemm
# 8192^3; every column, cuBLAS on the device), bench/cublas.py host to host from pinned and from
# pageable memory on the same cases, and bench/dropin_host.sh on the Fortran dgemm_ at 4096^3 and
# 8192^3 (OpenBLAS, tandem, NVBLAS); everything under OUT/measure.tar.gz, tables also printed.
#
# The sweep:
# 1. the probe's verdict on the GPU (TANDEM_VERBOSE's line), and `tandem devices`;
# 2. tests/gemm_engine_test (or each of ENGINE_TESTS, e.g. gemm_async_test for KERNEL 1's
#    asynchronous copies) on the instruction itself: every parameter set of the test against a
#    double-precision reference, awkward sizes, both storage orders, every transpose, alpha and
#    beta with NaN in C, in place, from ordinary memory and from pinned memory (TANDEM_DEVICE is
#    the GPU);
# 3. each parameter set of ENGINE_SWEEP (default bench/cases/engine_h100.txt; one NAME=V,... line
#    each, "profile" for the profile's own dgemm kernel) through vs_clblast --kernel at
#    ENGINE_CASES (default d:8192:8192:8192,d:4096:4096:4096): the kernel as one launch
#    (tandem_kernel), and with ENGINE_COLUMNS (default tandem_kernel) more columns; every result
#    checked against OpenBLAS;
# 4. cuBLAS through PyTorch (TF32 off) on the same cases, then one table (bench/engine_table.py).
# Writes OUT (default /tmp/tandem-out): gpu.txt, verdict.txt, test.txt, sweep.txt, sweep.tar.gz
# (sweep-N.{json,md}), cublas.{json,md}, engine.md. Exit status 1 if a test or a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = measure ]; then
  out=${2:-${OUT:-/tmp/tandem-out}}
  work=$out/measure
  mkdir -p "$work"
  cases=${MEASURE_CASES:-d:8192:8192:8192,d:4096:4096:4096,s:8192:8192:8192}
  status=0
  VS_CASES=$cases VS_REPS=${MEASURE_REPS:-5} bash bench/vs_clblast.sh run "$work/vs" > "$work/vs.txt" 2>&1 ||
    status=1
  for memory in pinned pageable; do
    python3 bench/cublas.py --cases "$cases" --reps "${MEASURE_REPS:-5}" --memory $memory \
      --json "$work/cublas-$memory.json" > "$work/cublas-$memory.md" 2>&1 || status=1
  done
  bash bench/dropin_host.sh "$work/dropin" "${MEASURE_DROPIN:-d:4096:4096:4096,d:8192:8192:8192}" \
    "${MEASURE_REPS:-5}" > "$work/dropin.txt" 2>&1 || status=1
  cat "$work/vs/table.md" "$work"/cublas-*.md "$work/dropin/dropin.md" 2>/dev/null
  tar -C "$out" -czf "$out/measure.tar.gz" measure && rm -rf "$work"
  exit $status
fi
out=${1:-${OUT:-/tmp/tandem-out}}
mkdir -p "$out"
tar xJf .gpu/bundle.tar.xz -C /tmp
# shellcheck disable=SC1091
source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
export TANDEM_DEVICE=${TANDEM_DEVICE:-nvidia}
cases=${ENGINE_CASES:-d:8192:8192:8192,d:4096:4096:4096}
columns=${ENGINE_COLUMNS:-tandem_kernel}
sweep=${ENGINE_SWEEP:-bench/cases/engine_h100.txt}
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"
tandem devices | tee -a "$out/gpu.txt"
TANDEM_VERBOSE=1 tandem gemm --precision d --m 256 --n 256 --k 256 --strategy gpu \
  --device "$TANDEM_DEVICE" --kernel KERNEL=3 2>&1 | tee "$out/verdict.txt"

# What NVIDIA's compiler made of ENGINE_INSPECT (default the codelet's defaults) in
# ENGINE_INSPECT_PRECISION (default d): registers and spills (build.log), the PTX.
mkdir -p "$out/inspect"
tandem kernel --precision "${ENGINE_INSPECT_PRECISION:-d}" --kernel "${ENGINE_INSPECT:-KERNEL=3}" --device "$TANDEM_DEVICE" --out-dir "$out/inspect" \
  > "$out/inspect/stdout.txt" 2>&1
grep -iE "registers|spill|bytes stack" "$out/inspect/build.log" | head -n 8 | tee "$out/registers.txt"

if [ "${ENGINE_TEST:-1}" = 1 ]; then
  for program in ${ENGINE_TESTS:-gemm_engine_test}; do
    "$program" 2>&1 | tail -n 40 | tee -a "$out/test.txt"
  done
  grep -q "PASSED" "$out/test.txt" && ! grep -q "FAILED" "$out/test.txt" || status=1
fi

# Warm-up: the host's memory grows on first use.
tandem gemm --precision d --m 8192 --n 8192 --k 8192 --strategy gpu --device "$TANDEM_DEVICE" \
  --reps 1 > /dev/null 2>&1 || true

n=0
while IFS= read -r line; do
  line=${line%%#*}
  line=$(echo "$line" | tr -d ' ')
  [ -z "$line" ] && continue
  n=$((n + 1))
  kernel=()
  [ "$line" != profile ] && kernel=(--kernel "$line")
  echo "== $n: $line" | tee -a "$out/sweep.txt"
  vs_clblast --cases "$cases" --only "$columns" --reps "${ENGINE_REPS:-5}" --warmup 2 \
    "${kernel[@]}" --json "$out/sweep-$n.json" > "$out/sweep-$n.md" 2>&1 || status=1
  cat "$out/sweep-$n.md" | tee -a "$out/sweep.txt"
done < "$sweep"

python3 bench/cublas.py --cases "$cases" --reps "${ENGINE_REPS:-5}" --json "$out/cublas.json" \
  > "$out/cublas.md" 2>&1 || status=1
cat "$out/cublas.md"
python3 bench/engine_table.py "$sweep" "$out" | tee "$out/engine.md" || status=1
# One archive for the sweep's files: the device tool brings back only a few files.
tar -C "$out" -czf "$out/sweep.tar.gz" $(cd "$out" && ls -d sweep-* inspect 2>/dev/null) &&
  rm -rf "$out"/sweep-* "$out/inspect"
exit $status
