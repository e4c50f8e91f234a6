#!/usr/bin/env bash
# Runs tests/oclgrind_test.cpp with Oclgrind as the only OpenCL platform (its ICD alone in
# OCL_ICD_VENDORS, so PoCL and its own LLVM never load beside Oclgrind's) and its checks on:
# out-of-bounds accesses and barrier divergence (always on in Oclgrind), data races (write-write
# races of equal values too) and API misuse. Its messages go to a log file that the test reads
# after each call: anything there fails the run, with the kernel's parameters and the call.
# TANDEM_OCLGRIND_KERNELS (default 24 per precision), TANDEM_OCLGRIND_SEED and
# TANDEM_OCLGRIND_KERNEL (one parameter set) choose what runs.
#
# With TANDEM_OCLGRIND_UNINITIALIZED=1 (ctest oclgrind.uninitialized) it checks uninitialised
# values instead of races. Debian 12's Oclgrind 21.10 stops with "Unsupported instruction: freeze"
# in that check on kernels as LLVM optimises them (Oclgrind added freeze in 2026, commit ee3a739),
# so they are compiled unoptimised (-cl-opt-disable), about four times slower; and the check
# loses the facts it needs in ways tests/oclgrind_preload.c mends, preloaded here.
# Usage: oclgrind.sh OCLGRIND_TEST [PRELOAD_LIBRARY]
set -uo pipefail
test_binary=$1
preload=${2:-}
source "$(dirname "$0")/hermetic.sh"
icd=/usr/lib/oclgrind/liboclgrind-rt-icd.so
if [ ! -f "$icd" ]; then
  echo "FAILED: $icd is missing: Oclgrind is not installed (bash scripts/setup.sh installs it)"
  exit 1
fi
mkdir "$work/vendors"
echo "$icd" >"$work/vendors/oclgrind.icd"
log=$work/oclgrind.log
: >"$log"
export OCL_ICD_VENDORS=$work/vendors OCLGRIND_LOG=$log TANDEM_DEVICE=oclgrind
export OCLGRIND_DATA_RACES=1 OCLGRIND_UNIFORM_WRITES=1 OCLGRIND_CHECK_API=1
if [ "${TANDEM_OCLGRIND_UNINITIALIZED:-0}" = 1 ]; then
  if [ ! -f "$preload" ]; then
    echo "FAILED: the uninitialised-value check needs tests/oclgrind_preload.c's library: '$preload'"
    exit 1
  fi
  # One check at a time: the uninitialised-value run leaves races to the other.
  unset OCLGRIND_DATA_RACES OCLGRIND_UNIFORM_WRITES
  export OCLGRIND_UNINITIALIZED=1 OCLGRIND_BUILD_OPTIONS=-cl-opt-disable LD_PRELOAD=$preload
fi
# Oclgrind simulates work-groups on as many threads as it is given; the suite runs beside others.
export OCLGRIND_NUM_THREADS=${OCLGRIND_NUM_THREADS:-2}
if [ "${TANDEM_OCLGRIND_UNINITIALIZED:-0}" = 1 ] && [ -z "${TANDEM_OCLGRIND_VARIANT:-}" ]; then
  # A process for each variant: the staging buffers a discrete share reuses from an earlier call
  # keep the shadow of that call's host writes, smaller than this call's (oclgrind_preload.c).
  # Oclgrind empties its log when a process opens it: each process has its own, read after it.
  export TANDEM_OCLGRIND_SAMPLE=$work/sample
  status=0
  variant=0
  while :; do
    export OCLGRIND_LOG=$work/oclgrind-$variant.log
    out=$(TANDEM_OCLGRIND_VARIANT=$variant "$test_binary" 2>&1)
    code=$?
    grep -q "oclgrind: no variant" <<<"$out" && break
    if ! grep -q "kernel variants, .* calls" <<<"$out"; then
      echo "$out"
      echo "FAILED: variant $variant ended before its calls ran"
      status=1
      break
    fi
    if [ $code -ne 0 ]; then
      echo "$out"
      status=1
    elif [ -s "$OCLGRIND_LOG" ]; then
      echo "FAILED: Oclgrind reported, in variant $variant:"
      head -c 4000 "$OCLGRIND_LOG"
      status=1
    fi
    variant=$((variant + 1))
  done
  echo "oclgrind: uninitialised values checked in $variant kernel variants, a process each"
  [ "$variant" -gt 0 ] || status=1
  : >"$log"  # read above, process by process
else
  "$test_binary"
  status=$?
fi
# Anything the test did not attribute to a call (a report after its last look) fails it too.
if [ -s "$log" ] && [ "$status" -eq 0 ]; then
  echo "FAILED: Oclgrind reported:"
  head -c 4000 "$log"
  exit 1
fi
exit $status
