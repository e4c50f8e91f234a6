#!/usr/bin/env bash
# Runs tests/oclgrind_test.cpp with Oclgrind as the only OpenCL platform (its ICD alone in
# OCL_ICD_VENDORS, so PoCL and its own LLVM never load beside Oclgrind's) and its checks on:
# out-of-bounds accesses and barrier divergence (always on in Oclgrind), data races (write-write
# races of equal values too) and API misuse. Its messages go to a log file that the test reads
# after each call: anything there fails the run, with the kernel's parameters and the call.
# TANDEM_OCLGRIND_KERNELS (default 24 per precision), TANDEM_OCLGRIND_SEED and
# TANDEM_OCLGRIND_KERNEL (one parameter set) choose what runs.
#
# Uninitialised values are checked only with TANDEM_OCLGRIND_UNINITIALIZED=1, by hand: Debian 12's
# Oclgrind 21.10 stops with "Unsupported instruction: freeze" in that check on the kernels as it
# optimises them (Oclgrind added freeze in 2026, commit ee3a739), so it then compiles them
# unoptimised (-cl-opt-disable), which runs each call about four times slower. And it then
# reports uninitialised values stored to local memory, read from an operand the host copied in,
# on the discrete path's column-major A^T call (TANDEM_OCLGRIND_KERNEL='KERNEL=0': in gemm's
# load of B, or with A_T=0 B_T=0 in the transpose kernel), whose result the test checks right:
# not explained yet (issue 16), so not a CI check.
# Usage: oclgrind.sh OCLGRIND_TEST
set -uo pipefail
test_binary=$1
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
  export OCLGRIND_UNINITIALIZED=1 OCLGRIND_BUILD_OPTIONS=-cl-opt-disable
fi
# Oclgrind simulates work-groups on as many threads as it is given; the suite runs beside others.
export OCLGRIND_NUM_THREADS=${OCLGRIND_NUM_THREADS:-2}
"$test_binary"
status=$?
# Anything the test did not attribute to a call (a report after its last look) fails it too.
if [ -s "$log" ] && [ "$status" -eq 0 ]; then
  echo "FAILED: Oclgrind reported:"
  head -c 4000 "$log"
  exit 1
fi
exit $status
