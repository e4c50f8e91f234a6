#!/usr/bin/env bash
# Reference LAPACK's own linear-equation tests (Debian's liblapack-test: xlintsts, xlintstd,
# xlintstc, xlintstz) with reference LAPACK, run without and with libtandem_blas.so (LD_PRELOAD):
# the pass and fail counts (every summary line) must be the same, and tandem must have served the
# level-3 calls LAPACK makes (checked: gemm, syrk and trsm for s and d; gemm, herk and trsm for c
# and z). Prints both wall times.
#
#   lapack_testers.sh LIBTANDEM_BLAS default|forced
#
# default: the full input files under default routing (on a 2-core machine with PoCL, 95 s for
# all four with TANDEM_VERBOSE on: c 19 s, z 23 s). forced: Cholesky (the xPO path: potrf calls
# syrk or herk, trsm and gemm) with every call forced through the hybrid split, a subset that fits
# CI's time (the full forced run takes many minutes on PoCL): all nine matrix types for s and d,
# and for c and z types 2 (random, well conditioned), 4 (not positive definite: potrf stops
# midway) and 7 (ill conditioned): with all nine, c and z took 140 and 200 s there, with these
# three 45 and 63 s (s and d: 52 and 60 s).
set -euo pipefail
lib=$(readlink -f "$1")
mode=$2
lapack=/usr/lib/x86_64-linux-gnu/lapack
if [ ! -x "$lapack/xlintstd" ]; then
  echo "the reference LAPACK testers are missing: install liblapack-test (scripts/setup.sh does)" >&2
  exit 1
fi
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
cd "$work"
status=0
for p in s d c z; do
  input="$lapack/${p}test.in"
  if [ "$mode" = forced ]; then
    # The header (sizes, block sizes, thresholds, what to test) and the positive-definite path;
    # for c and z three of its types, listed on the line after the count.
    case $p in
      s | d) { head -16 "$input"; grep -E "^${p^^}PO " "$input"; } > "${p}sub.in" ;;
      *) { head -16 "$input"; echo "${p^^}PO    3"; echo "2 4 7"; } > "${p}sub.in" ;;
    esac
    input="${p}sub.in"
  fi
  # tandem's verbose lines are counted as they come (there are millions): calls per routine,
  # calls that reached the split, tandem's warnings (not the OpenCL compiler's diagnostics).
  count='/^tandem: /{c[$2]++; if ($0 ~ /strategy=hybrid|products=[1-9]/) s++}
         /^tandem( [^:]*)?: warning/{w[$0]++}
         END{for (k in c) print "calls", k, c[k]; print "split", s + 0; for (k in w) print "warning", k}'
  start=$(date +%s%N)
  LD_LIBRARY_PATH=$lapack "$lapack/xlintst$p" < "$input" > "ref_$p.out" 2>&1 || status=1
  mid=$(date +%s%N)
  if [ "$mode" = forced ]; then
    TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 TANDEM_MIN_MNK=0 TANDEM_VERBOSE=1 \
      LD_PRELOAD=$lib LD_LIBRARY_PATH=$lapack "$lapack/xlintst$p" < "$input" 2>&1 > "tan_$p.out" |
      awk "$count" > "tan_$p.counts" || status=1
  else
    TANDEM_VERBOSE=1 LD_PRELOAD=$lib LD_LIBRARY_PATH=$lapack "$lapack/xlintst$p" < "$input" \
      2>&1 > "tan_$p.out" | awk "$count" > "tan_$p.counts" || status=1
  fi
  end=$(date +%s%N)
  echo "== xlintst$p ($mode): reference LAPACK alone $(( (mid - start) / 1000000 )) ms," \
       "with tandem $(( (end - mid) / 1000000 )) ms (TANDEM_VERBOSE on)"
  summary() { grep -E "tests run|failed to pass|passed the threshold|error exits" "$1" || true; }
  summary "tan_$p.out" | sed 's/^ */  /'
  if [ -z "$(summary "ref_$p.out")" ]; then
    echo "  -> no summary lines: the tester did not run"; status=1
  elif ! diff <(summary "ref_$p.out") <(summary "tan_$p.out") > "diff_$p.txt"; then
    echo "  -> the pass and fail counts differ with tandem:"; cat "diff_$p.txt"; status=1
  else
    echo "  the same $(summary "ref_$p.out" | wc -l) summary lines with and without tandem"
  fi
  case $p in
    s | d) checked="gemm syrk trsm" ;;
    *) checked="gemm herk trsm" ;;
  esac
  for r in $checked; do
    served=$(awk -v r="$p$r" '$1 == "calls" && $2 == r {print $3}' "tan_$p.counts")
    echo "  tandem served ${served:-0} $p$r calls"
    [ "${served:-0}" -gt 0 ] || { echo "  -> no $p$r call reached tandem"; status=1; }
  done
  if [ "$mode" = forced ]; then
    split=$(awk '$1 == "split" {print $2}' "tan_$p.counts")
    echo "  calls that reached the split: $split"
    [ "$split" -gt 0 ] || { echo "  -> nothing reached the split"; status=1; }
  fi
  if grep -q "^warning" "tan_$p.counts"; then
    grep "^warning" "tan_$p.counts"; echo "  -> tandem warned"; status=1
  fi
done
[ $status -eq 0 ] && echo "reference LAPACK's tests agree with and without tandem" || echo "LAPACK TESTERS DISAGREE"
exit $status
