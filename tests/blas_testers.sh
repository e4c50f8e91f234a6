#!/usr/bin/env bash
# Runs the reference BLAS level-3 testers from Debian's libblas-test (xblat3s, xblat3d, xblat3c,
# xblat3z for the Fortran interface; xscblat3, xdcblat3, xccblat3, xzcblat3 for CBLAS, both
# layouts) against libtandem_blas.so through LD_PRELOAD, with the reference libblas.so.3 on
# LD_LIBRARY_PATH for the testers' helper symbols. Prints every verdict line. Fails unless every
# routine passed its error-exit and computational tests and tandem served every computational call
# of the routines it exports (the tester says how many it made): gemm, symm, trmm, trsm, syrk and
# syr2k in every precision, and hemm, herk and her2k for c and z. Under forced routing, also unless
# some of each served routine's calls were split between the GPU path and the CPU. Those counts come from
# TANDEM_VERBOSE's lines, and under TANDEM_VERBOSE no call takes the straight path to OpenBLAS
# (src/blas3/dropin/straight.hpp): `straight` runs the testers as a program runs, where nearly all of
# their calls (small ones) go straight, and checks their verdicts alone.
#
#   blas_testers.sh LIBTANDEM_BLAS default|forced|straight
set -euo pipefail
lib=$(readlink -f "$1")
mode=$2
blas=/usr/lib/x86_64-linux-gnu/blas
if [ ! -x "$blas/xblat3s" ] || [ ! -x "$blas/xscblat3" ] || [ ! -x "$blas/xzcblat3" ]; then
  echo "the reference testers are missing: install libblas-test (scripts/setup.sh does)" >&2
  exit 1
fi

source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
cd "$work"  # the testers write their reports into the current directory
[ "$mode" = straight ] || export TANDEM_VERBOSE=1
if [ "$mode" = forced ]; then
  # The testers' sizes are tiny: only forcing reaches the split. 0.5 lies strictly inside (0, 1).
  export TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 TANDEM_MIN_MNK=0
fi

status=0
check() {  # check NAME OUTPUT STDERR PRECISION ROUTINES
  local name=$1 out=$2 err=$3 p=$4 routines=$5
  echo "== $name ($mode routing)"
  grep -E "PASSED|FAILED|FAIL|NOT DETECTED|\*\*\*\*\*" "$out" | sed 's/^ */  /' || true
  if grep -qE "FAIL|NOT DETECTED|\*\*\*\*\*" "$out" || ! grep -q "END OF TESTS" "$out"; then
    echo "  -> $name: NOT all tests passed"; status=1
  fi
  local r calls served split
  for r in $([ "$mode" = straight ] || echo "$routines"); do
    # The tester's own count of computational calls, over both layouts where it tests both.
    calls=$(grep -iE "^ *(cblas_)?$p$r +PASSED .*COMPUTATIONAL" "$out" |
              sed -E 's/.*\( *([0-9]+) CALLS\).*/\1/' | awk '{s += $1} END {print s + 0}')
    served=$(grep -c "^tandem: $p$r " "$err" || true)
    echo "  $p$r: tandem served $served calls (the tester made $calls)"
    [ "$calls" -gt 0 ] || { echo "  -> $name: $p$r was not tested"; status=1; }
    [ "$served" -ge "$calls" ] || { echo "  -> $name: $p$r calls did not go through tandem"; status=1; }
    if [ "$mode" = forced ]; then
      if [ "$r" = gemm ]; then
        split=$(grep -c "^tandem: ${p}gemm .*strategy=hybrid" "$err" || true)
      else
        split=$(grep -cE "^tandem: $p$r .* products=[1-9]" "$err" || true)
      fi
      echo "    of them through the split: $split"
      [ "$split" -gt 0 ] || { echo "  -> $name: no $p$r call reached the split"; status=1; }
    fi
  done
  # tandem's own warnings (not the OpenCL compiler's "N warnings generated.", which PoCL prints
  # when it builds a kernel its cache lacks, and which is no fallback).
  if grep -qE "^tandem( [^:]*)?: warning" "$err"; then
    grep -E "^tandem( [^:]*)?: warning" "$err" | sort -u
    echo "  -> $name: tandem warned (GPU fallback?)"; status=1
  fi
}

for p in s d c z; do
  case $p in
    s | d) served="gemm symm trmm trsm syrk syr2k" ;;
    *) served="gemm symm hemm trmm trsm syrk herk syr2k her2k" ;;
  esac
  LD_PRELOAD=$lib LD_LIBRARY_PATH=$blas "$blas/x${p}cblat3" < "$blas/${p}in3" > "c$p.out" 2> "c$p.err" || status=1
  check "x${p}cblat3 (CBLAS)" "c$p.out" "c$p.err" "$p" "$served"
  rm -f "${p}blat3.out"
  LD_PRELOAD=$lib LD_LIBRARY_PATH=$blas "$blas/xblat3$p" < "$blas/${p}blat3.in" > "f$p.log" 2> "f$p.err" || status=1
  check "xblat3$p (Fortran)" "${p}blat3.out" "f$p.err" "$p" "$served"
done
[ $status -eq 0 ] && echo "all reference testers passed" || echo "REFERENCE TESTERS FAILED"
exit $status
