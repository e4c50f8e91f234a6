#!/usr/bin/env bash
# The route (src/plan/route.hpp): a call that auto sends to the CPU alone starts OpenCL only until the
# machine's route is recorded. In an empty profile directory the first process opens OpenCL (it
# must ask the device's profile) and records the route; the next, through the C API and the
# drop-in, computes on the CPU without starting OpenCL; a change the route depends on (a new file
# in the profile directory, a device named, another strategy) sends calls back to OpenCL.
#
#   route_test.sh ROUTE_CALLS     (ROUTE_TEST_N: the calls' size, 300; one auto keeps on the CPU)
set -u
program=$(readlink -f "$1")
n=${ROUTE_TEST_N:-300}
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
unset TANDEM_STRATEGY TANDEM_DEVICE TANDEM_VERBOSE TANDEM_LOG TANDEM_BALANCE TANDEM_MIN_MNK

# expect WHAT STARTED VIA N [VAR=VALUE...]: one process; STARTED is "started" or "not started".
expect() {
  local what=$1 started=$2 via=$3 n=$4
  shift 4
  out=$(env "$@" "$program" "$via" "$n" 2>&1)
  if [ $? -eq 0 ] && grep -qx "opencl $started" <<<"$out"; then
    ok "$what: opencl $started, C right"
  else
    bad "$what: wanted opencl $started: $out"
  fi
}

expect "first process, empty profile directory" started api "$n"
[ -f "$TANDEM_PROFILE_DIR/routes.cache" ] && ok "the route is recorded: $(cat "$TANDEM_PROFILE_DIR/routes.cache")" ||
  bad "no routes.cache after the first process: $(ls -A "$TANDEM_PROFILE_DIR")"
expect "next process, C API" "not started" api "$n"
expect "next process, drop-in" "not started" dropin "$n" TANDEM_VERBOSE=1
expect "a device named" started api "$n" TANDEM_DEVICE=0
expect "another strategy" started api "$n" TANDEM_STRATEGY=hybrid
expect "the drop-in's threshold is no part of the route" "not started" dropin "$n" TANDEM_MIN_MNK=0
touch "$TANDEM_PROFILE_DIR/another.json"
expect "a file added to the profile directory" started api "$n"
expect "then the route again" "not started" api "$n"
# The route file is no profile: a profile lookup never reads it (nothing warns about it).
out=$(TANDEM_VERBOSE=1 "$program" dropin "$n" 2>&1)
grep -q "routes.cache" <<<"$out" && bad "routes.cache was read as a profile: $out" ||
  ok "routes.cache is not read as a profile"
finish
