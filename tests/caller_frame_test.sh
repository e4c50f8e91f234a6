#!/usr/bin/env bash
# The drop-in's entries called as C programs call them (tests/caller_frame_test.c): every Fortran
# entry through prototypes without hidden string lengths, every CBLAS entry through cblas.h's, with
# guard values above the stack arguments, in s, d, c and z. Plain (OpenBLAS's entries: the
# harness's own check), then under LD_PRELOAD=libtandem_blas.so: by default (small calls straight
# to OpenBLAS through the assembly entries, larger ones through tandem's path), with TANDEM_VERBOSE
# (no call goes straight; every larger call logged), and forced through the hybrid split for every
# product (c and z at the smaller size only: there their rank updates at the larger one split
# into hundreds of products each, about 9 minutes on 2 cores).
#
#   caller_frame_test.sh CALLER_FRAME_TEST LIBTANDEM_BLAS
set -u
program=$(readlink -f "$1")
lib=$(readlink -f "$2")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
unset TANDEM_VERBOSE TANDEM_STRATEGY TANDEM_GPU_FRACTION TANDEM_MIN_MNK TANDEM_LOG

# run NAME [VAR=VALUE...] [-- ARGUMENT...]: one run, its verdict; its output stays in $work/NAME.
run() {
  local name=$1 vars=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    vars+=("$1")
    shift
  done
  [ $# -gt 0 ] && shift
  env "${vars[@]}" "$program" "$@" > "$work/$name.out" 2> "$work/$name.err"
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
for name in dtrmm_ cblas_sgemm zher2k_ cblas_cherk; do
  grep -q "^$name: .*libtandem_blas" "$work/preload.out" && ok "preload: $name is tandem's" ||
    bad "preload: $name is not tandem's: $(head -n 2 "$work/preload.out")"
done

run verbose LD_PRELOAD="$lib" TANDEM_VERBOSE=1
# went P "ROUTINE SIZES" OPTIONS: P's routine reached tandem's path at the larger size (m 301,
# n 283, k 263; its log line names those it takes) through both interfaces and the ordinary call,
# 3 calls for each of its OPTIONS.
went() {
  local count
  count=$(grep -c "tandem: $1$2 " "$work/verbose.err")
  [ "$count" -ge $((3 * $3)) ] && ok "verbose: $1$2 went through tandem ($count calls)" ||
    bad "verbose: $1$2 went through tandem $count times, not $((3 * $3))"
}
for p in s d c z; do
  # The transposes: N and T, and C (the conjugate transpose) for c's and z's gemm, trmm and trsm.
  [[ $p == [cz] ]] && t=3 || t=2
  went $p "gemm m=301 n=283 k=263" $((t * t))
  went $p "syrk n=283 k=263" 4
  went $p "syr2k n=283 k=263" 4
  went $p "symm m=301 n=283" 4
  went $p "trmm m=301 n=283" $((8 * t))
  went $p "trsm m=301 n=283" $((8 * t))
  if [[ $p == [cz] ]]; then
    went $p "hemm m=301 n=283" 4
    went $p "herk n=283 k=263" 4
    went $p "her2k n=283 k=263" 4
  fi
done

run forced LD_PRELOAD="$lib" TANDEM_VERBOSE=1 TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 \
  TANDEM_MIN_MNK=0 -- sd
for routine in dtrsm ztrsm cher2k; do
  grep -qE "tandem: $routine .*products=[1-9]" "$work/forced.err" &&
    ok "forced: $routine's products went through tandem's GEMM" ||
    bad "forced: no $routine product went through tandem's GEMM"
done
finish
