#!/usr/bin/env bash
# R with libtandem_blas.so preloaded gives the same crossprod(A) and A %*% B as without it, and
# TANDEM_VERBOSE shows R's dsyrk and dgemm calls going through tandem (issue 14). Skipped (exit
# 77, which ctest reports as skipped) only when R is not installed.
#
#   r_dropin.sh LIBTANDEM_BLAS SCRIPT_DIR
set -euo pipefail
lib=$(readlink -f "$1")
here=$2
if ! command -v Rscript > /dev/null; then
  echo "SKIPPED: R is not installed (scripts/setup.sh installs r-base-core)"
  exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
status=0
Rscript "$here/r_dropin.R" run "$work/ref.rds"
TANDEM_VERBOSE=1 LD_PRELOAD=$lib Rscript "$here/r_dropin.R" run "$work/out.rds" 2> "$work/err"
grep "tandem:" "$work/err" || true
# crossprod(A) calls dsyrk; A %*% B calls dgemm.
for call in "dsyrk n=1024 k=1024" "dgemm m=1024 n=1024 k=1024"; do
  if grep -q "tandem: $call" "$work/err"; then
    echo "${call%% *}: R's call went through tandem"
  else
    echo "${call%% *}: R's call did NOT go through tandem"; status=1
  fi
done
Rscript "$here/r_dropin.R" compare "$work/ref.rds" "$work/out.rds" || status=1
exit $status
