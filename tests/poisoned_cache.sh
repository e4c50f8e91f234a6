#!/usr/bin/env bash
# Proves the suite hermetic: plants a poisoned profile for this very device wherever a test process
# could find one (a fake HOME's ~/.cache/tandem, a fake XDG_CACHE_HOME, an exported
# TANDEM_PROFILE_DIR), shows that the tandem command applies it, then runs test processes under it:
# they must pass and leave no temporary file behind.
#
#   poisoned_cache.sh TANDEM LIBTANDEM_BLAS HERMETIC_TEST ENV_TEST EXECUTOR_TEST
#
# The poison is this device's own profile (a tiny `tandem tune`, so its identity and file name are
# exactly those the library looks for), rewritten so that every size gives every row to the GPU,
# sgemm's kernel cannot tile (every GPU sgemm warns, then takes the default kernel) and dgemm's
# reads B transposed, through a copy, in 256-row tiles (the kernel the demo's quick tune chose on
# the 2-core machine). Where a test process reads it, Hermetic.*, env.verbose (B=copy instead of
# zero-copy), Executor.HybridSplitFollowsTheKernelTile (77 GPU rows for a 256-row tile) and the
# forced reference testers (a warning) fail.
set -u
tandem=$(readlink -f "$1")
lib=$(readlink -f "$2")
hermetic_test=$3 env_test=$4 executor_test=$5
here=$(dirname "${BASH_SOURCE[0]}")
# PoCL's compiled kernels stay where they are (PoCL looks in POCL_CACHE_DIR, else under
# XDG_CACHE_HOME, else under HOME): under the fake ones below every run would compile them again.
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pocl/kcache}
source "$here/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fails=$((fails + 1)); }

# Where each route to a profile leads, the poison planted in each.
declare -A planted=([home]=$work/home/.cache/tandem [xdg]=$work/xdg/tandem
                    [exported]=$work/exported)
under() {  # under ROUTE COMMAND...: runs COMMAND where that route leads to the poison
  local route=$1
  shift
  case $route in
    home) env -u XDG_CACHE_HOME -u TANDEM_PROFILE_DIR HOME="$work/home" "$@" ;;
    xdg) env -u TANDEM_PROFILE_DIR HOME="$work/home" XDG_CACHE_HOME="$work/xdg" "$@" ;;
    exported)
      env HOME="$work/home" XDG_CACHE_HOME="$work/xdg" TANDEM_PROFILE_DIR="$work/exported" "$@" ;;
  esac
}

# This device's profile, tuned as cheaply as tune allows (no direct kernel, which would run the
# small calls below in place of the poisoned kernels), then poisoned.
if ! TANDEM_PROFILE_DIR=$work/tuned "$tandem" tune --precision both --budget-evals 1 --sizes 64 \
       --top-kernels 1 --parts 8 --reps 1 --no-direct --no-batch > "$work/tune.txt" 2>&1; then
  cat "$work/tune.txt"
  echo "FAILED: tandem tune"
  exit 1
fi
tuned=$(ls "$work/tuned"/*.json)
name=$(basename "$tuned")
mkdir -p "${planted[@]}"
/usr/bin/python3 - "$tuned" "${planted[home]}/$name" "${planted[xdg]}/$name" \
  "${planted[exported]}/$name" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
kernels = {
    "s": {"KERNEL": 1, "MWG": 24, "NWG": 32, "MDIMC": 8, "NDIMC": 8, "VWM": 2, "VWN": 2, "VW": 2},
    "d": {"AK": 0, "A_T": 0, "B_T": 1, "DB": 0, "KERNEL": 1, "KUNROLL": 4, "KWG": 32, "MDIMC": 32,
          "MWG": 256, "NDIMC": 16, "NWG": 64, "SA": 1, "SB": 1, "STRIDED": 1, "VW": 4, "VWM": 8,
          "VWN": 1},
}
for precision, p in profile["precisions"].items():
    p["gpu_kernel"] = kernels[precision]
    for b in p["buckets"]:
        b.update(gpu_parts=b["parts"], kernel=kernels[precision], gpu_kernel=kernels[precision])
    p["buckets"].insert(0, dict(p["buckets"][0], size=1))  # no call is too small for it
for out in sys.argv[2:]:
    json.dump(profile, open(out, "w"), indent=2)
PY

# The poison is live: by each route, a process that does not replace its profile directory (the
# tandem command) applies it, and it changes the call.
for route in home xdg exported; do
  out=$(under "$route" "$tandem" gemm --precision s --m 100 --n 70 --k 50 --strategy hybrid --json \
          2> "$work/control.err")
  if grep -q "\"profile\": \"${planted[$route]}/$name" <<<"$out" &&
     grep -q "kernel does not fit" "$work/control.err"; then
    ok "by $route the tandem command applies the poison"
  else
    cat "$work/control.err"
    bad "by $route the poison is not applied, so this test proves nothing: $out"
  fi
done

passes() {  # passes ROUTE WHAT COMMAND...
  local route=$1 what=$2
  shift 2
  if under "$route" "$@" > "$work/run.txt" 2>&1; then
    ok "$what passes with the poison in $route"
  else
    tail -n 40 "$work/run.txt"
    bad "$what fails with the poison in $route"
  fi
}
for route in home xdg exported; do
  passes "$route" hermetic_test "$hermetic_test"
  passes "$route" env.verbose TANDEM_VERBOSE=1 TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 \
    "$env_test" --gtest_filter='EnvVerbose.*'
  passes "$route" executor_test "$executor_test"
done
# The scripts replace an exported TANDEM_PROFILE_DIR too (hermetic.sh).
passes exported "the forced reference testers" bash "$here/blas_testers.sh" "$lib" forced

# Every process removed its own directory: TMPDIR (hermetic.sh's) is empty again.
left=$(ls -A "$TMPDIR")
[ -z "$left" ] && ok "no test process left a temporary file" || bad "left in TMPDIR: $left"

echo "$fails failed"
[ $fails -eq 0 ]
