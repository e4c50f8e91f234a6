#!/usr/bin/env bash
# tandem side by side with cuBLAS, CLBlast and OpenBLAS on the offline GPU host
# (../shared/gpu-host/README.md).
#
#   bash bench/vs_clblast.sh pack        # here: build, bundle vs_clblast with gpu_host.sh's programs
#   bash bench/vs_clblast.sh run [OUT]   # there, from the repo root: vs_clblast, cublas.py, merge
#   bash bench/vs_clblast.sh direct [OUT]  # there: issue 17's check of the direct path
#   bash bench/vs_clblast.sh pack-before REV   # here: REV built in a worktree, bundled to
#                                              # .gpu/before.tar.xz (vs_clblast and tandem)
#   bash bench/vs_clblast.sh before-after [OUT]  # there: both builds in turn (below)
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
# before-after: the build REV (pack-before) and this one (pack), both unpacked, run vs_clblast in
# turn for VS_ROUNDS rounds (default 3; the order alternates between rounds) after one warm-up,
# on the GPU VS_DEVICE names (default "NVIDIA"), with VS_CASES and VS_REPS (default 5) and the
# columns VS_ONLY (default: CLBlast on the device and pinned, OpenBLAS, and every tandem column but
# the direct ones); then bench/before_after.py compares them. It writes OUT/before-rN.json,
# OUT/after-rN.json, their tables (.md), OUT/cublas.{json,md} (the cuBLAS ceiling on the same
# cases, unless VS_CUBLAS=0) and OUT/before_after.md.
# Here, without a GPU: ./build/bench/vs_clblast --cases s:256:256:256,d:200:300:100 --reps 3
set -euo pipefail
cd "$(dirname "$0")/.."
# The bundle's programs: one list, shared with bench/gpu_host.sh.
mapfile -t programs < <(grep -v '^#' bench/bundle_programs.txt)

case "${1:-}" in
  pack)
    bash scripts/build.sh
    [ -x build/bench/vs_clblast ] || { echo "vs_clblast was not built (CLBlast missing?)" >&2; exit 1; }
    rm -rf .gpu/bundle .gpu/bundle.tar.xz && mkdir -p .gpu  # other bundles (CALLS_BEFORE) stay
    ../shared/gpu-host/bundle.sh .gpu/bundle "${programs[@]}"
    # Reference LAPACK (bench/lapack_factor and bench/lapack_host.sh load it from lib/ref) and the
    # tandem drop-in (bench/dropin_host.sh preloads it).
    mkdir -p .gpu/bundle/lib/ref
    cp -L /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3 .gpu/bundle/lib/ref/
    cp -L /lib/x86_64-linux-gnu/lib{blas.so.3,gfortran.so.5,quadmath.so.0} .gpu/bundle/lib/
    cp -L build/libtandem_blas.so.0 .gpu/bundle/lib/
    tar -C .gpu -cJf .gpu/bundle.tar.xz bundle
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
  pack-before)
    rev=${2:?"pack-before needs a revision"}
    tree=/tmp/tandem-before-$rev
    [ -d "$tree" ] || git worktree add --detach "$tree" "$rev"
    cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$tree/build" -j "$(nproc)" --target vs_clblast tandem_cli >/dev/null
    rm -rf .gpu/before .gpu/before.tar.xz && mkdir -p .gpu
    ../shared/gpu-host/bundle.sh .gpu/before "$tree/build/bench/vs_clblast" "$tree/build/tandem"
    rm -rf .gpu/before
    ;;
  before-after)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out" /tmp/ba-before /tmp/ba-after
    tar xJf .gpu/before.tar.xz -C /tmp/ba-before
    tar xJf .gpu/bundle.tar.xz -C /tmp/ba-after
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
    only=${VS_ONLY:-clblast_device,clblast_pinned,openblas,tandem_kernel,tandem_gpu_pageable,tandem_gpu_pinned,tandem_auto,tandem_hybrid_pinned}
    args=(--only "$only" --reps "${VS_REPS:-5}" --device "${VS_DEVICE:-NVIDIA}")
    [ -n "${VS_CASES:-}" ] && args+=(--cases "$VS_CASES")
    # One build's run, in a shell of its own (each bundle's env.sh puts its libraries first).
    one() {
      (
        # shellcheck disable=SC1090
        source "/tmp/ba-$1/$2/env.sh"
        vs_clblast "${args[@]}" --json "$out/$1-r$3.json" >"$out/$1-r$3.md" 2>&1
      ) || echo "$1 round $3: vs_clblast exited $?" | tee -a "$out/before_after.md"
    }
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
      | tee "$out/gpu.txt" || true
    (
      # shellcheck disable=SC1091
      source /tmp/ba-after/bundle/env.sh
      tandem gemm --precision d --m 8192 --n 8192 --k 8192 --strategy gpu --device "${VS_DEVICE:-NVIDIA}" --reps 1 > /dev/null || true
    )
    for round in $(seq 1 "${VS_ROUNDS:-3}"); do
      if [ $((round % 2)) = 1 ]; then
        one before before "$round"; one after bundle "$round"
      else
        one after bundle "$round"; one before before "$round"
      fi
      echo "round $round done" >&2
    done
    # The cuBLAS ceiling on the same cases, once (VS_CUBLAS=0 skips it).
    if [ "${VS_CUBLAS:-1}" != 0 ]; then
      cublas_args=(--reps "${VS_REPS:-5}")
      [ -n "${VS_CASES:-}" ] && cublas_args+=(--cases "$VS_CASES")
      python3 bench/cublas.py "${cublas_args[@]}" --json "$out/cublas.json" >"$out/cublas.md" 2>&1 ||
        echo "cublas.py exited $?" | tee -a "$out/before_after.md"
    fi
    python3 bench/before_after.py "$out" | tee -a "$out/before_after.md"
    ;;
  *)
    echo "usage: $0 pack | run [OUT] | direct [OUT] | pack-before REV | before-after [OUT]" >&2
    exit 2
    ;;
esac
