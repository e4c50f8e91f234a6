#!/usr/bin/env bash
# scipy.linalg.blas's level-3 routines (tests/scipy_dropin.py) give the same results with and
# without libtandem_blas.so under LD_PRELOAD: scipy's wrappers call the Fortran entries from C
# without gfortran's hidden string lengths. By default, with TANDEM_VERBOSE (every routine of every
# precision at the larger size logged by tandem), and forced through the hybrid split. Skipped (exit 77)
# only when python3-scipy is not installed.
#
#   scipy_dropin.sh LIBTANDEM_BLAS SCRIPT_DIR
set -u
lib=$(readlink -f "$1")
here=$2
py=/usr/bin/python3  # Debian's python3, the one python3-scipy belongs to
if ! "$py" -c "import scipy.linalg.blas" 2> /dev/null; then
  echo "SKIPPED: python3-scipy is not installed (scripts/setup.sh installs it)"
  exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
unset TANDEM_VERBOSE TANDEM_STRATEGY TANDEM_GPU_FRACTION TANDEM_MIN_MNK TANDEM_LOG

"$py" "$here/scipy_dropin.py" run "$work/ref.npz" > /dev/null || bad "scipy without tandem"

# run NAME [VAR=VALUE...]: one run under the drop-in, compared with the run without it.
run() {
  local name=$1
  shift
  if ! env LD_PRELOAD="$lib" "$@" "$py" "$here/scipy_dropin.py" run "$work/$name.npz" \
    > "$work/$name.out" 2> "$work/$name.err"; then
    bad "$name: scipy failed: $(tail -n 5 "$work/$name.err")"
    return
  fi
  grep -m 3 "illegal value" "$work/$name.out" "$work/$name.err" &&
    bad "$name: a routine reported a valid argument"
  "$py" "$here/scipy_dropin.py" compare "$work/ref.npz" "$work/$name.npz" > "$work/$name.cmp" &&
    ok "$name: $(tail -n 1 "$work/$name.cmp")" ||
    bad "$name: $(grep -m 10 -E 'DIFFERS|NOT FINITE' "$work/$name.cmp") $(tail -n 1 "$work/$name.cmp")"
}

run default
run verbose TANDEM_VERBOSE=1
for call in "gemm m=301 n=283 k=263" "symm m=301 n=283" "syrk n=283 k=263" "syr2k n=283 k=263" \
  "trmm m=301 n=283" "trsm m=301 n=283" "hemm m=301 n=283" "herk n=283 k=263" "her2k n=283 k=263"; do
  for p in s d c z; do
    case $p$call in [sd]he*) continue ;; esac  # hemm, herk and her2k are complex alone
    grep -q "tandem: $p$call " "$work/verbose.err" && ok "verbose: scipy's $p$call went through tandem" ||
      bad "verbose: scipy's $p$call did not go through tandem"
  done
done
run forced TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 TANDEM_MIN_MNK=0
finish
