#!/usr/bin/env bash
# tandem side by side with cuBLAS, CLBlast and OpenBLAS on the offline GPU host
# (../shared/gpu-host/README.md).
#
#   bash bench/vs_clblast.sh pack        # here: build, bundle vs_clblast with gpu_host.sh's programs
#   bash bench/vs_clblast.sh run [OUT]   # there, from the repo root: vs_clblast, cublas.py, merge
#   bash bench/vs_clblast.sh direct [OUT]  # there: issue 17's check of the direct path
#
# pack leaves only .gpu/bundle.tar.xz (it also serves bench/gpu_host.sh). run unpacks it to
# /tmp/bundle, warms the host's memory up, then runs
#   vs_clblast      (bench/vs_clblast.cpp: OpenBLAS, CLBlast on device / pageable / pinned, tandem
#                    kernel / gpu / auto; checks every result; see its header for the columns)
#   bench/cublas.py (PyTorch, TF32 off: the cuBLAS ceiling; from the tree, not the bundle)
#   bench/vs_clblast_table.py (merges both JSON files: one GFLOPS table and the ratios)
# and writes OUT (default /tmp/tandem-out): gpu.txt, vs_clblast.{md,json}, cublas.{md,json} and
# table.md (the merged table, also printed). VS_CASES (s|d:M:N:K,... as vs_clblast --cases;
# default 4096^3 and 8192^3 sgemm, 4096^3 dgemm and awkward shapes) and VS_REPS (default 7) pass
# through to both programs; VS_WARMUP=0 skips the warm-up. Exit status 1 if either program
# failed a check or could not run; the merged table is written whatever happened.
#
# direct: issue 17's target for small and odd calls. With VS_TUNE=1 it first tunes the direct
# kernel and its threshold into the local profile (`tandem tune --direct-only --precision s`,
# bounded by --direct-seconds, 120 s by default; VS_TUNE_ARGS adds options), then runs
# `vs_clblast --direct`: sgemm 256^3, 512^3, 1024^3, 1000^3, 1023^3 and 4097^3 (VS_CASES
# overrides) with OpenBLAS, CLBlast from pinned memory, tandem's direct path from tandem_malloc
# and std::vector memory, tandem gpu from tandem_malloc memory and auto from std::vector memory,
# and the table of the issue's two ratios (direct / CLBlast pinned >= 1; auto / OpenBLAS >= 1).
# It writes OUT/direct.{md,json} (and OUT/tune-direct.txt with VS_TUNE=1).
# Here, without a GPU: ./build/bench/vs_clblast --cases s:256:256:256,d:200:300:100 --reps 3
set -euo pipefail
cd "$(dirname "$0")/.."
# One bundle serves this script and bench/gpu_host.sh: keep its program list in sync with that one.
programs=(build/bench/vs_clblast build/tandem
          build/tests/gemm_test build/tests/executor_test build/tests/api_test
          build/bench/tandem_demo build/bench/gemm_bench build/bench/strategy_eval)

case "${1:-}" in
  pack)
    bash scripts/build.sh
    [ -x build/bench/vs_clblast ] || { echo "vs_clblast was not built (CLBlast missing?)" >&2; exit 1; }
    rm -rf .gpu/bundle .gpu/bundle.tar.xz && mkdir -p .gpu  # other bundles (CALLS_BEFORE) stay
    ../shared/gpu-host/bundle.sh .gpu/bundle "${programs[@]}"
    rm -rf .gpu/bundle  # keep only .gpu/bundle.tar.xz, which travels with the tree
    ;;
  run | direct)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    tar xJf .gpu/bundle.tar.xz -C /tmp
    # shellcheck disable=SC1091
    source /tmp/bundle/env.sh
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
    args=()
    [ -n "${VS_CASES:-}" ] && args+=(--cases "$VS_CASES")
    [ -n "${VS_REPS:-}" ] && args+=(--reps "$VS_REPS")
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
      | tee "$out/gpu.txt" || true
    if [ "$1" = direct ]; then
      if [ "${VS_TUNE:-0}" = 1 ]; then
        # shellcheck disable=SC2086
        tandem tune --direct-only --precision s ${VS_TUNE_ARGS:-} 2>&1 | tee "$out/tune-direct.txt"
      fi
      tandem profile show | tee -a "$out/gpu.txt" || true
      status=0
      vs_clblast --direct "${args[@]}" --json "$out/direct.json" | tee "$out/direct.md" || status=1
      exit $status
    fi
    # Warm-up: the host's memory grows on first use; touch as much as the largest case needs.
    if [ "${VS_WARMUP:-1}" != 0 ]; then
      echo "warming up" >&2
      tandem gemm --precision d --m 8192 --n 8192 --k 8192 --strategy gpu --reps 1 > /dev/null || true
      tandem gemm --precision d --m 8192 --n 8192 --k 4096 --strategy cpu --reps 2 > /dev/null || true
    fi
    status=0
    vs_clblast "${args[@]}" --json "$out/vs_clblast.json" | tee "$out/vs_clblast.md" || status=1
    # cublas.py comes from the carried tree, not the bundle: it needs only the host's python3,
    # PyTorch and numpy. Without them its column reads "-".
    rm -f "$out/cublas.json"
    python3 bench/cublas.py "${args[@]}" --json "$out/cublas.json" | tee "$out/cublas.md" || status=1
    echo
    python3 bench/vs_clblast_table.py "$out/vs_clblast.json" "$out/cublas.json" | tee "$out/table.md" \
      || status=1
    exit $status
    ;;
  *)
    echo "usage: $0 pack | run [OUT] | direct [OUT]" >&2
    exit 2
    ;;
esac
