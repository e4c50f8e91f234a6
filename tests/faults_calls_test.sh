#!/usr/bin/env bash
# OpenCL's waits and finishes failing (tests/cl_faults.c, preloaded) under every strategy: cpu,
# gpu, hybrid with static and dynamic balance, and auto. Each run makes tests/faults_calls.cpp's
# calls through the C API, C++ and the drop-in with the N-th wait or finish failing and every 9th
# after it, for N = 1..9 (so each of a call's waits and finishes fails in some run), the failure
# coming back after the real call (the work done) or before it (commands still in flight). Every
# C must be right, or as the error its call reported documents; no run may crash or hang.
#
#   faults_calls_test.sh FAULTS_CALLS LIBCL_FAULTS
set -u
program=$(readlink -f "$1")
shim=$(readlink -f "$2")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
unset TANDEM_VERBOSE TANDEM_LOG TANDEM_DEVICE
export TANDEM_MIN_MNK=0  # every drop-in call through tandem's path

failed_calls=0
for strategy in cpu gpu hybrid:static hybrid:dynamic auto; do
  for when in after before; do
    for n in 1 2 3 4 5 6 7 8 9; do
      what="$strategy, failing $when, from wait or finish $n every 9th"
      timeout -k 5 300 env TANDEM_STRATEGY="${strategy%%:*}" TANDEM_GPU_FRACTION=0.5 \
        TANDEM_BALANCE="$([ "${strategy#*:}" = dynamic ] && echo dynamic || echo static)" \
        CL_FAULTS="$n,9" CL_FAULTS_WHEN="$when" LD_PRELOAD="$shim" "$program" \
        > "$work/out" 2> "$work/err"
      rc=$?
      failed_calls=$((failed_calls + $(grep -oP 'cl_faults: \d+ calls, \K\d+' "$work/err" || echo 0)))
      if [ $rc -eq 0 ]; then
        echo "ok: $what: $(tail -n 1 "$work/out")"
      else
        bad "$what: exit $rc: $(grep -m 5 WRONG "$work/out") $(tail -n 3 "$work/err")"
      fi
    done
  done
done
# The sweep reached tandem's devices: the injected failures did happen.
[ "$failed_calls" -gt 100 ] && ok "$failed_calls waits and finishes failed in all" ||
  bad "only $failed_calls waits and finishes failed: the sweep did not reach the devices"
finish
