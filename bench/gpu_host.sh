#!/usr/bin/env bash
# Runs tandem's tests and demo on the offline GPU host (../shared/gpu-host/README.md).
#
#   bash bench/gpu_host.sh pack        # here: build, then bundle programs and libraries into .gpu/
#   bash bench/gpu_host.sh run [OUT]   # there, from the repo root: unpack, run, logs into OUT
set -euo pipefail
cd "$(dirname "$0")/.."
programs=(build/tests/gemm_test build/tests/executor_test build/tests/api_test
          build/bench/tandem_demo build/bench/gemm_bench)

case "${1:-}" in
  pack)
    bash scripts/build.sh
    rm -rf .gpu && mkdir -p .gpu
    ../shared/gpu-host/bundle.sh .gpu/bundle "${programs[@]}"
    ;;
  run)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    tar xJf .gpu/bundle.tar.xz -C /tmp
    # shellcheck disable=SC1091
    source /tmp/bundle/env.sh
    export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
    status=0
    # Tests that assume a unified-memory device (PoCL) are left out on a discrete GPU.
    for t in gemm_test api_test; do
      "$t" --gtest_brief=1 > "$out/$t.log" 2>&1 || status=1
      tail -n 3 "$out/$t.log"
    done
    executor_test --gtest_brief=1 --gtest_filter='Executor.*-Executor.ZeroCopy*' > "$out/executor_test.log" 2>&1 || status=1
    tail -n 3 "$out/executor_test.log"
    for f in Fallback.NoMatchingDeviceFallsBackOnceWithOneWarning Fallback.BrokenKernelBuildIsAnErrorUnderGpu; do
      executor_test --gtest_brief=1 --gtest_filter="$f" >> "$out/executor_test.log" 2>&1 || status=1
    done
    tail -n 2 "$out/executor_test.log"
    tandem_demo --sizes "${TANDEM_DEMO_SIZES:-1024,2048,4096}" --reps 5 | tee "$out/demo.txt"
    exit $status
    ;;
  *)
    echo "usage: $0 pack | run [OUT]" >&2
    exit 2
    ;;
esac
