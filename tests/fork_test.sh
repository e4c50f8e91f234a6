#!/usr/bin/env bash
# fork() after tandem used OpenCL, under every strategy: tests/fork_test.c through the C API, and
# numpy's products in a multiprocessing pool through the drop-in (libtandem_blas.so preloaded,
# every call routed through tandem). Each run's stderr must show the parent reached tandem, and
# the GPU path where the strategy asks for it.
#
#   fork_test.sh FORK_TEST LIBTANDEM_BLAS SCRIPT_DIR
set -uo pipefail
program=$1
lib=$(readlink -f "$2")
here=$3
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
py=/usr/bin/python3
have_numpy=0
"$py" -c "import numpy" 2> /dev/null && have_numpy=1
status=0
# Each line: a name, then the environment of that run, separated by semicolons.
while IFS=';' read -ra run; do
  name=${run[0]}
  settings=("${run[@]:1}")
  if env "${settings[@]}" TANDEM_VERBOSE=1 "$program" > "$work/out" 2> "$work/err"; then
    echo "C program, $name: ok"
  else
    echo "C program, $name: FAILED"; cat "$work/out" "$work/err"; status=1
  fi
  # auto may keep a call this small on the CPU: the built-in PoCL profile decides.
  if [ "$name" != cpu ] && [ "$name" != auto ] && ! grep -q "gpu_rows=[1-9]" "$work/err"; then
    echo "C program, $name: the parent's calls never took the GPU path"; status=1
  fi
  if [ "$have_numpy" = 1 ]; then
    if env "${settings[@]}" TANDEM_VERBOSE=1 TANDEM_MIN_MNK=0 LD_PRELOAD="$lib" \
        "$py" "$here/fork_pool.py" > "$work/out" 2> "$work/err"; then
      echo "numpy pool, $name: ok"
    else
      echo "numpy pool, $name: FAILED"; cat "$work/out"; tail -5 "$work/err"; status=1
    fi
    if ! grep -q "tandem: [sd]gemm m=" "$work/err"; then
      echo "numpy pool, $name: numpy's calls did not reach tandem"; status=1
    fi
  fi
done << 'RUNS'
cpu;TANDEM_STRATEGY=cpu
gpu;TANDEM_STRATEGY=gpu
hybrid;TANDEM_STRATEGY=hybrid;TANDEM_GPU_FRACTION=0.5
hybrid-dynamic;TANDEM_STRATEGY=hybrid;TANDEM_GPU_FRACTION=0.5;TANDEM_BALANCE=dynamic
auto;TANDEM_STRATEGY=auto
two-devices;TANDEM_STRATEGY=hybrid;TANDEM_GPU_FRACTION=0.6;TANDEM_DEVICE=all;POCL_DEVICES=basic pthread
RUNS
[ "$have_numpy" = 1 ] || echo "numpy pool runs skipped: python3-numpy is not installed"
exit $status
