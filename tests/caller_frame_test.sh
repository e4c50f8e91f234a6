#!/usr/bin/env bash
# The drop-in's entries called as C programs call them (tests/caller_frame_test.c): every Fortran
# entry through prototypes without hidden string lengths, every CBLAS entry through cblas.h's, with
# guard values above the stack arguments. Plain (OpenBLAS's entries: the harness's own check),
# then under LD_PRELOAD=libtandem_blas.so: by default (small calls straight to OpenBLAS through
# the assembly entries, larger ones through tandem's path), with TANDEM_VERBOSE (no call goes
# straight; every larger call logged), and forced through the hybrid split for every product.
#
#   caller_frame_test.sh CALLER_FRAME_TEST LIBTANDEM_BLAS
set -u
program=$(readlink -f "$1")
lib=$(readlink -f "$2")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
unset TANDEM_VERBOSE TANDEM_STRATEGY TANDEM_GPU_FRACTION TANDEM_MIN_MNK TANDEM_LOG

# run NAME [VAR=VALUE...]: one run, its verdict; its output stays in $work/NAME.
run() {
  local name=$1
  shift
  env "$@" "$program" > "$work/$name.out" 2> "$work/$name.err"
  local status=$?
  tail -n 1 "$work/$name.out"
  # Every call is valid: a routine reporting an argument would mean the entry misread one.
  grep -m 3 "illegal value" "$work/$name.out" "$work/$name.err" && status=1
  if [ $status -eq 0 ]; then
    ok "$name: every guard intact, every result right"
  else
    bad "$name: exit $status: $(grep -m 20 -E 'FAIL|^[^0-9]' "$work/$name.out") $(tail -n 5 "$work/$name.err")"
  fi
}

run plain
grep -q "dtrmm_: .*libopenblas" "$work/plain.out" && ok "plain: the entries are OpenBLAS's" ||
  bad "plain: the entries are not OpenBLAS's: $(head -n 2 "$work/plain.out")"

run preload LD_PRELOAD="$lib"
for name in dtrmm_ cblas_sgemm; do
  grep -q "^$name: .*libtandem_blas" "$work/preload.out" && ok "preload: $name is tandem's" ||
    bad "preload: $name is not tandem's: $(head -n 2 "$work/preload.out")"
done

run verbose LD_PRELOAD="$lib" TANDEM_VERBOSE=1
# Each routine of each precision reached tandem's path at the larger size (m 301, n 283, k 263),
# through both interfaces and the ordinary call: 3 calls for each of its options.
for routine in "gemm m=301 n=283 k=263" "syrk n=283 k=263" "syr2k n=283 k=263" "symm m=301 n=283" \
  "trmm m=301 n=283" "trsm m=301 n=283"; do
  for p in s d; do
    count=$(grep -c "tandem: $p$routine " "$work/verbose.err")
    [ "$count" -ge 12 ] && ok "verbose: $p$routine went through tandem ($count calls)" ||
      bad "verbose: $p$routine went through tandem $count times"
  done
done

run forced LD_PRELOAD="$lib" TANDEM_VERBOSE=1 TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 \
  TANDEM_MIN_MNK=0
grep -qE "tandem: dtrsm .*products=[1-9]" "$work/forced.err" &&
  ok "forced: trsm's products went through tandem's GEMM" ||
  bad "forced: no trsm product went through tandem's GEMM"
finish
