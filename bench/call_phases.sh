#!/usr/bin/env bash
# Where a small GEMM's time goes on the GPU host (issue 17), tandem beside CLBlast, both under
# bench/cl_trace.c (every OpenCL call timed).
#
#   bash bench/call_phases.sh pack         # here, after building: .gpu/phases.tar.xz
#   bash bench/call_phases.sh run OUT      # there: call_phases.jsonl, clblast-N.txt in OUT
#
# PHASES_SIZES (8,64,256,512,1024), PHASES_REPS (200), PHASES_DEVICE (nvidia).
# PHASES_BEFORE=FILE.tar.xz: a phases bundle of the code before a change; its call_phases and this
# one's then run in turn, PHASES_ROUNDS times (2), untraced, into before_after.jsonl ("side").
# PHASES_KERNELS=FILE: one kernel per line (NAME=v,...), each run from tandem_malloc memory at
# PHASES_SIZES into kernels.jsonl, beside the profile's.
# PHASES_PIN_FROM=BYTES: tandem_malloc memory again with blocks pinned from BYTES up, in turn with
# the library's threshold, PHASES_ROUNDS times, into pin_from.jsonl; and what tandem_malloc, a
# fill and tandem_free cost at PHASES_ALLOC_SIZES bytes under both thresholds, into allocs.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  pack)
    rm -rf .gpu/phases .gpu/phases.tar.xz
    ../shared/gpu-host/bundle.sh .gpu/phases build/bench/call_phases build/bench/libcl_trace.so \
      build/bench/vs_clblast build/tandem
    ;;
  run)
    out=${2:?OUT}
    mkdir -p "$out"
    # shellcheck source=bench/phases_env.sh
    source bench/phases_env.sh
    dev=${PHASES_DEVICE:-nvidia} sizes=${PHASES_SIZES:-8,64,256,512,1024} reps=${PHASES_REPS:-200}
    tandem devices > "$out/devices.txt"
    trace=/tmp/phases/bin/libcl_trace.so
    # Untraced first (the tracer's own cost stays out of these), then traced.
    call_phases --device "$dev" --sizes "$sizes" --reps "$reps" | tee "$out/call_phases.jsonl"
    LD_PRELOAD=$trace call_phases --device "$dev" --sizes "$sizes" --reps "$reps" \
      | tee "$out/call_phases_traced.jsonl"
    if [ -n "${PHASES_BEFORE:-}" ]; then
      rm -rf /tmp/before-phases && mkdir -p /tmp/before-phases
      tar xJf "$PHASES_BEFORE" -C /tmp/before-phases
      for ((round = 0; round < ${PHASES_ROUNDS:-2}; round++)); do
        for side in before now; do
          if [ $side = before ]; then
            LD_LIBRARY_PATH=/tmp/before-phases/phases/lib:$LD_LIBRARY_PATH \
              /tmp/before-phases/phases/bin/call_phases --device "$dev" --sizes "$sizes" --reps "$reps"
          else
            call_phases --device "$dev" --sizes "$sizes" --reps "$reps"
          fi | sed "s/^{/{\"side\": \"$side\", /" | tee -a "$out/before_after.jsonl"
        done
      done
    fi
    if [ -n "${PHASES_PIN_FROM:-}" ]; then
      for ((round = 0; round < ${PHASES_ROUNDS:-2}; round++)); do
        for pin in default "$PHASES_PIN_FROM"; do
          if [ "$pin" = default ]; then
            call_phases --device "$dev" --sizes "$sizes" --reps "$reps" --memory pinned
          else
            call_phases --device "$dev" --sizes "$sizes" --reps "$reps" --memory pinned --pin-from "$pin"
          fi | sed "s/^{/{\"pin\": \"$pin\", /" | tee -a "$out/pin_from.jsonl"
        done
      done
      alloc_sizes=${PHASES_ALLOC_SIZES:-4096,65536,262144,1048576,4194304}
      TANDEM_DEVICE=$dev call_phases --alloc-sizes "$alloc_sizes" --reps 50 | tee -a "$out/allocs.jsonl"
      TANDEM_DEVICE=$dev call_phases --alloc-sizes "$alloc_sizes" --reps 50 --pin-from "$PHASES_PIN_FROM" \
        | tee -a "$out/allocs.jsonl"
    fi
    if [ -n "${PHASES_KERNELS:-}" ]; then
      while read -r kernel; do
        case "$kernel" in ''|'#'*) continue ;; esac
        call_phases --device "$dev" --sizes "$sizes" --reps "$reps" --memory pinned \
          --kernel "$kernel" | tee -a "$out/kernels.jsonl"
      done < "$PHASES_KERNELS"
    fi
    for n in ${sizes//,/ }; do
      vs_clblast --device "$dev" --only clblast_pinned,tandem_gpu_pinned --cases "s:$n:$n:$n" \
        --reps "$reps" --warmup 10 > "$out/clblast-$n.txt" 2>&1 || true
      CL_TRACE_AT_EXIT=1 LD_PRELOAD=$trace vs_clblast --device "$dev" --only clblast_pinned \
        --cases "s:$n:$n:$n" --reps "$reps" --warmup 10 > "$out/clblast-traced-$n.txt" 2>&1 || true
    done
    grep -h "clblast_pinned\|tandem_gpu_pinned" "$out"/clblast-[0-9]*.txt || true
    ;;
  *) echo "usage: $0 pack | run OUT" >&2; exit 2 ;;
esac
