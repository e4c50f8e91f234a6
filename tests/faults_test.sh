#!/usr/bin/env bash
# Issue 16's faults end to end, through the tandem command: hand-edited profiles (a register tile
# that overflowed PoCL's stack, a kernel that cannot build, non-regular and oversized files),
# a TANDEM_DEVICE index beyond any integer type, sizes that overflowed, a tune that could not
# write its results, and an unreadable profile directory. Each command runs under a timeout, so a
# hang fails here instead of blocking the suite; a crash shows as its signal's exit status.
#
#   faults_test.sh TANDEM
set -u
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish, run, expect
# A checked gemm's JSON that ran right with rows on the GPU ($1: gpu or cpu for where rows went).
gemm_ok() {
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); side=sys.argv[2]
assert d["ok"], d
assert (d["gpu_rows"] > 0) if side == "gpu" else (d["gpu_rows"] == 0), d' "$out" "$1" 2> /dev/null
}
count() { grep -c -- "$1" <<<"$err"; }

# This device's own profile (a tiny tune: its identity and file name are those the library looks
# for), to be rewritten with bad kernels. No direct kernel: where the tune found it faster, the
# calls below would run it instead of the planted kernels.
if ! TANDEM_PROFILE_DIR=$work/tuned timeout 300 "$tandem" tune --precision both --small-space \
       --budget-evals 1 --sizes 64 --top-kernels 1 --parts 2 --reps 1 --no-direct --no-batch \
       > "$work/tune.txt" 2>&1; then
  cat "$work/tune.txt"
  echo "FAILED: tandem tune"
  exit 1
fi
tuned=$(ls "$work/tuned"/*.json)
mine=$TANDEM_PROFILE_DIR/$(basename "$tuned")
# with_kernel JSON FILE: the tuned profile with every kernel JSON and half the rows on the GPU at
# every size, written to FILE.
with_kernel() {
  "$py" - "$tuned" "$1" "$2" <<'PY'
import json, sys
profile, kernel = json.load(open(sys.argv[1])), json.loads(sys.argv[2])
for p in profile["precisions"].values():
    p["gpu_kernel"] = kernel
    for b in p["buckets"]:
        b.update(gpu_parts=b["parts"] // 2, kernel=kernel, gpu_kernel=kernel)
    p["buckets"].insert(0, dict(p["buckets"][0], size=1))  # no call is too small for it
json.dump(profile, open(sys.argv[3], "w"), indent=2)
PY
}
gemm=(gemm --precision s --m 64 --n 48 --k 32 --reps 1 --json)

# 1. A register tile no work-group can hold (MWG=100000 without local memory overflowed the stack
# inside PoCL and killed every process that called sgemm): refused by the kernel rule.
run 120 "$tandem" "${gemm[@]}" --kernel MWG=100000,SA=0,SB=0 --strategy gpu
expect "--kernel MWG=100000 is refused, not a crash" 1 "register tile"
with_kernel '{"MWG": 100000, "SA": 0, "SB": 0}' "$work/huge-tile.json"
run 120 env TANDEM_PROFILE_DIR="$work/imports" "$tandem" profile import "$work/huge-tile.json"
expect "profile import refuses a register tile too large" 1 "register tile"
[ -z "$(ls -A "$work/imports" 2> /dev/null)" ] || bad "the refused import left a file"

# 1 and 6. One rule for a profile's kernel that cannot run, whatever the reason (a tile too large,
# a vector width the kernel cannot build, an unknown parameter): one warning, the default kernel.
for kernel in '{"MWG": 100000, "SA": 0, "SB": 0}' '{"VW": 3}' '{"NOSUCH": 1}'; do
  with_kernel "$kernel" "$mine"
  for strategy in gpu hybrid auto; do
    run 120 "$tandem" "${gemm[@]}" --strategy "$strategy"
    if [ $rc -eq 0 ] && gemm_ok gpu && [ "$(count "kernel does not fit")" -eq 1 ]; then
      ok "profile kernel $kernel under $strategy: one warning, the default kernel"
    else
      bad "profile kernel $kernel under $strategy (exit $rc): $out $(head -c 600 <<<"$err")"
    fi
  done
done
rm -f "$mine"

# 2. TANDEM_DEVICE beyond any integer type: auto and hybrid compute on the CPU with a warning that
# names the variable; tandem_malloc (--resident, 1 MiB blocks, which it would pin) returns memory.
for strategy in auto hybrid; do
  run 120 env TANDEM_DEVICE=99999999999999999999999 "$tandem" "${gemm[@]}" --strategy "$strategy"
  if [ $rc -eq 0 ] && gemm_ok cpu && grep -q "TANDEM_DEVICE" <<<"$err"; then
    ok "TANDEM_DEVICE=99999999999999999999999 under $strategy: the CPU, with a warning naming it"
  else
    bad "TANDEM_DEVICE=99999999999999999999999 under $strategy (exit $rc): $out $err"
  fi
done
run 120 env TANDEM_DEVICE=99999999999999999999999 "$tandem" gemm --m 512 --n 512 --k 512 \
  --resident --strategy hybrid --reps 1 --json
[ $rc -eq 0 ] && gemm_ok cpu && ok "tandem_malloc with TANDEM_DEVICE=99999999999999999999999" ||
  bad "tandem_malloc with TANDEM_DEVICE=99999999999999999999999 (exit $rc): $err"

# 3. FIFOs in the profile directory: two named as the lookup names this device's files (its own,
# and another setup's) are each skipped with one warning, and no call waits on them; one named
# otherwise is not even opened (only the files named for the device are read: issue 39).
other=${mine%-*}-0000000000000000.json
mkfifo "$TANDEM_PROFILE_DIR/a.json" "$mine" "$other"
run 60 "$tandem" "${gemm[@]}" --strategy hybrid --fraction 0.5
if [ $rc -eq 0 ] && gemm_ok gpu && [ "$(count "not a regular file")" -eq 2 ] && ! grep -q a.json <<<"$err"; then
  ok "FIFOs in the profile directory are skipped, each with one warning"
else
  bad "FIFOs in the profile directory (exit $rc): $err"
fi
rm -f "$TANDEM_PROFILE_DIR/a.json" "$mine" "$other"

# 7. A 200 MB file is no profile: refused by its size, not read (sparse: it takes no disk).
truncate -s 200M "$mine"
run 60 "$tandem" "${gemm[@]}" --strategy hybrid --fraction 0.5
expect "a 200 MB profile is refused by its size" 0 "a profile is at most"
rm -f "$mine"

# 4. Sizes that overflowed or that the library would refuse only after the command had allocated
# them: refused first, as usage errors (exit 2). Under a 4 GB address-space limit, so that a
# regression fails quickly instead of allocating 24 GB.
overflow() {  # overflow WHAT PATTERN ARGS...
  local what=$1 pattern=$2
  shift 2
  run 60 bash -c 'ulimit -v 4000000; exec "$@"' - "$tandem" "$@"
  expect "$what" 2 "$pattern"
}
overflow "gemm 4294967296 cubed" "m = 4294967296" gemm --m 4294967296 --n 4294967296 --k 4294967296
overflow "gemm --m 3000000000" "m = 3000000000" gemm --m 3000000000 --n 1 --k 1
overflow "compare --sizes 1:9223372036854775807:x2" "9223372036854775807" \
  compare --no-tune --sizes 1:9223372036854775807:x2
overflow "compare --shape 3000000000x1x1" "m = 3000000000" compare --no-tune --shape 3000000000x1x1
# 7. Memory that runs out names what it was for, not a bare std::bad_alloc.
run 60 bash -c 'ulimit -v 1000000; exec "$@"' - "$tandem" gemm --m 20000 --n 20000 --k 1
if [ $rc -ne 0 ] && grep -q "20000x20000x1" <<<"$err" && grep -q "GB" <<<"$err"; then
  ok "out of memory names the problem and its size: $err"
else
  bad "out of memory (exit $rc): $err"
fi

# 5. A tune that cannot write its profile or its log stops before it measures anything (it used to
# spend its whole budget, then fail).
touch "$work/file"
tune=(tune --precision s --budget-seconds 600 --budget-evals 50 --sizes 64,128 --reps 1)
run 60 env TANDEM_PROFILE_DIR="$work/file/profiles" "$tandem" "${tune[@]}"
grep -q "^tune: " <<<"$err" && rc=-1  # a progress line: something was measured
expect "tune into an unwritable profile directory stops at once" 1 "cannot write the profile"
run 60 "$tandem" "${tune[@]}" --no-save --log "$work/file/tune.jsonl"
grep -q "^tune: " <<<"$err" && rc=-1
# The log is a file the command line names, so that is a usage error, found while parsing (the
# tuner's own check, for callers of the library, is TuneLog's).
expect "tune with an unwritable log stops at once" 2 "cannot write"

# 7. A profile directory that cannot be read is reported once: a file in its place, and (where
# permissions bind: as an unprivileged user) a directory without read permission.
run 60 env TANDEM_PROFILE_DIR="$work/file" "$tandem" "${gemm[@]}" --strategy hybrid --fraction 0.5
[ $rc -eq 0 ] && [ "$(count "cannot read the profile directory")" -eq 1 ] &&
  ok "a file as the profile directory is reported once" || bad "a file as the profile directory: $err"
mkdir -p "$work/locked/profiles" && chmod 000 "$work/locked/profiles"
as=()
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null && id nobody > /dev/null 2>&1; then
  # root reads any directory; nobody does not. nobody's HOME takes PoCL's kernel cache.
  chmod 755 "$work" && chmod 777 "$work/locked" &&
    as=(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work/locked")
  "${as[@]}" test -x "$tandem" || as=()  # the build is out of nobody's reach
fi
if [ "$(id -u)" -ne 0 ] || [ ${#as[@]} -gt 0 ]; then
  run 120 "${as[@]}" env TANDEM_PROFILE_DIR="$work/locked/profiles" "$tandem" "${gemm[@]}" \
    --strategy hybrid --fraction 0.5
  [ $rc -eq 0 ] && [ "$(count "cannot read the profile directory.*ermission denied")" -eq 1 ] &&
    ok "an unreadable profile directory is reported once" ||
    bad "an unreadable profile directory (exit $rc): $err"
else
  echo "skipped: an unreadable profile directory (root without setpriv or nobody)"
fi
chmod 755 "$work/locked/profiles"

# 7. NaN is no fraction.
for args in "gemm --strategy hybrid --fraction nan" "tune --split-margin nan"; do
  run 60 "$tandem" $args
  [ $rc -ne 0 ] && grep -q "from 0 to 1, not 'nan'" <<<"$err" && ok "rejects '$args'" ||
    bad "accepted '$args' (exit $rc)"
done
run 60 env TANDEM_GPU_FRACTION=nan "$tandem" "${gemm[@]}" --strategy hybrid
expect "TANDEM_GPU_FRACTION=nan is ignored with a warning" 0 "ignoring TANDEM_GPU_FRACTION='nan'"

finish
