#!/usr/bin/env bash
# The `tandem` command end to end, in an empty profile directory of its own (hermetic.sh): every
# subcommand, --json output that parses, and the README's conventions: exit 0 on success, 1 on a
# failure while working, 2 on a usage error (CLI11's parse errors included) with a message;
# --help with the defaults.
#
#   cli_test.sh TANDEM
set -u  # no pipefail: `grep -q` may close a pipe early, which is fine here
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
json_ok() { "$py" -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null; }

# the version: one number, from --version, devices and (below) the profile tune saves
version=$("$tandem" --version) && [[ $version =~ ^tandem\ [0-9]+\.[0-9]+\.[0-9]+$ ]] &&
  ok "--version: $version" || bad "--version: '$version'"
version=${version#tandem }

# devices
out=$("$tandem" devices) && grep -q "CPU BLAS: OpenBLAS" <<<"$out" && grep -qx "tandem $version" <<<"$out" &&
  ok devices || bad "devices: $out"
out=$("$tandem" devices --json) &&
  "$py" -c 'import json,sys; assert json.loads(sys.argv[1])["tandem_version"] == sys.argv[2]' "$out" "$version" &&
  ok "devices --json" || bad "devices --json: $out"
"$tandem" --json devices | json_ok && ok "--json before the subcommand" || bad "tandem --json devices"
# the sets, on PoCL's two devices (no GPU among them): the first is the default and all auto
# weighs; "all" is both
out=$(POCL_DEVICES="basic pthread" "$tandem" devices --json) &&
  "$py" -c 'import json,sys; s=json.loads(sys.argv[1])["sets"]
assert s == {"default": [0], "auto": [0], "all": [0, 1]}, s' "$out" &&
  ok "devices --json: the sets" || bad "devices --json sets: $out"

# gemm: a checked call, in text and JSON, under each strategy
for s in auto cpu gpu hybrid; do
  out=$("$tandem" gemm --precision d --m 150 --n 70 --k 90 --strategy "$s" --json) &&
    "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] and d["gflops"] > 0, d' "$out" &&
    ok "gemm --strategy $s" || bad "gemm --strategy $s: $out"
done
"$tandem" gemm --m 64 --n 64 --k 64 | grep -q "GFLOPS" && ok "gemm text" || bad "gemm text"
# complex: cgemm and zgemm checked against the CPU in complex double, rates at 8 flops a multiply-add
for p in c z; do
  out=$("$tandem" gemm --precision $p --m 97 --n 66 --k 45 --strategy hybrid --json) &&
    "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] and d["precision"] == sys.argv[2], d
assert d["gpu_rows"] > 0 and d["cpu_rows"] > 0, d' "$out" $p &&
    ok "gemm --precision $p" || bad "gemm --precision $p: $out"
done
# dynamic balance: the rows in chunks, reported per side
out=$("$tandem" gemm --m 300 --n 64 --k 64 --strategy hybrid --fraction 0.5 --balance dynamic --json) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] and d["balance"] == "dynamic", d
assert d["gpu_rows"] + d["cpu_rows"] == 300 and sum(x["chunks"] for x in d["devices"]) + d["cpu_chunks"] >= 2, d' "$out" &&
  ok "gemm --balance dynamic" || bad "gemm --balance dynamic: $out"

# Usage errors: a message naming the problem, exit 2, whether CLI11 or the subcommand finds it.
expect_status() {
  local want=$1 args=$2 msg rc
  msg=$("$tandem" $args 2>&1 >/dev/null)
  rc=$?
  [ $rc -eq "$want" ] && [ -n "$msg" ] && ok "exit $want for '$args': $(head -1 <<<"$msg")" ||
    bad "exit $rc, not $want, for '$args': $msg"
}
for args in "" "nosuch" "--bogus" "gemm --bogus" "gemm --m -3" "gemm --m" "gemm --precision q" \
  "gemm --strategy best" "gemm --balance greedy" "gemm --fraction 2" "gemm --kernel MWG" \
  "gemm --kernel NOSUCH=1" "tune --strategy best" "tune --start FOO" "tune --sizes 0" \
  "kernel --kernel NOSUCH=1" "kernel --out x" "profile" "profile frobnicate" "profile import" \
  "profile import $work/none.json" "profile show extra" "profile export $work/no/such/dir/p.json" \
  "compare --json $work/c.json" "tune --split-min 10 --split-max 5 --device no-such-device" \
  "tune --split-max 65 --device no-such-device" "tune --model-only --direct-only --device no-such-device" \
  "tune --direct-only --batch-only --device no-such-device" "tune --batch-only --no-batch --device no-such-device" "tune --batch-sizes 16 --device no-such-device" \
  "compare --out-csv $work/x --out-plot $work/x --device no-such-device"; do
  expect_status 2 "$args"
done
# Those that name no-such-device exit 2, not 1: found before any device is opened. So is a
# strategy list with nothing in it (it ran an empty table and exited 0).
msg=$("$tandem" compare --strategies '' --device no-such-device 2>&1)
[ $? -eq 2 ] && grep -q "names no strategy" <<<"$msg" && ok "compare --strategies '': exit 2" ||
  bad "compare --strategies '': $msg"
# An unknown subcommand is named (it was "A subcommand is required").
msg=$("$tandem" frobnicate 2>&1)
[ $? -eq 2 ] && grep -q "unknown subcommand 'frobnicate'" <<<"$msg" && ok "tandem frobnicate names it" ||
  bad "tandem frobnicate: $msg"
# Failures while working: exit 1.
expect_status 1 "gemm --device no-such-device --strategy gpu --m 8 --n 8 --k 8"
# --help and --version: exit 0, help with each option's default.
for sub in "" devices tune profile gemm kernel compare; do
  "$tandem" $sub --help > "$work/help.txt" && ok "$sub --help: exit 0" || bad "$sub --help: exit $?"
done
"$tandem" tune --help | grep -q -- "--budget-evals INT:POSITIVE=40" && ok "tune --help shows defaults" ||
  bad "tune --help shows no defaults: $("$tandem" tune --help | grep budget-evals)"
"$tandem" gemm --help | grep -q -- "--m INT:POSITIVE=1024" && ok "gemm --help shows defaults" ||
  bad "gemm --help shows no defaults"
"$tandem" compare --help | grep -q "=tandem-compare.csv" && ok "compare --help shows where files go" ||
  bad "compare --help does not show where files go"

# kernel: the source as compiled, the build log and the binary; a set that cannot build says so
kdir="$work/kernel"
out=$("$tandem" kernel --precision d --kernel KERNEL=1,MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,VW=2 --trans-a \
        --out-dir "$kdir" --json) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["built"] and d["binary_bytes"] > 0, d' "$out" &&
  grep -q "^#define PRECISION 64$" "$kdir/kernel.cl" && grep -q "^#define TRANS_A 1" "$kdir/kernel.cl" &&
  grep -q "^#define MWG 32" "$kdir/kernel.cl" && [ -s "$kdir/kernel.bin" ] && [ -f "$kdir/build.log" ] &&
  ok "kernel writes source, log and binary" || bad "kernel: $out"
rm -rf "$kdir"
# The device's rules reject it: a failure while working (exit 1), not a usage error.
msg=$("$tandem" kernel --kernel KERNEL=1,MWG=24,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,VW=2 --out-dir "$kdir" 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -q "do not fit" <<<"$msg" && grep -q "MWG=24" <<<"$msg" && [ ! -e "$kdir/kernel.bin" ] &&
  ok "kernel rejects a set that cannot tile" || bad "kernel accepted a bad set (rc $rc): $msg"
msg=$("$tandem" kernel --kernel NOSUCH=1 --out-dir "$kdir" 2>&1)
[ $? -eq 2 ] && grep -q "NOSUCH" <<<"$msg" && ok "kernel rejects an unknown parameter" || bad "kernel NOSUCH: $msg"

# tune (tiny), then every profile action
out=$("$tandem" tune --precision s --budget-evals 2 --sizes 64,96 --top-kernels 1 --parts 8 --reps 1 --no-batch --json 2>/dev/null) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["saved"] and "s" in d["precisions"], d
assert d["tandem_version"] == sys.argv[2], (d["tandem_version"], sys.argv[2])' "$out" "$version" &&
  ok "tune --json, the profile records tandem $version" || bad "tune: $out"
path=$("$tandem" profile path)
[ -f "$path" ] && ok "profile path: $path" || bad "profile path $path does not exist"
"$tandem" profile show | grep -q "sgemm" && ok "profile show" || bad "profile show"
"$tandem" profile show --json | json_ok && ok "profile show --json" || bad "profile show --json"
"$tandem" profile path --json | json_ok && ok "profile path --json" || bad "profile path --json"
# Exported under another name the lookup gives this device (only such names are read): a copy.
copy=$TANDEM_PROFILE_DIR/$(basename "${path%-*}")-0000000000000000.json
"$tandem" profile export "$copy" --json | json_ok && cmp -s "$path" "$copy" && ok "profile export --json" ||
  bad "profile export"
keep=$work/kept.json && cp "$path" "$keep"
# Under hybrid, which takes the profile's split: auto may send so small a call to the CPU by the
# machine's route without looking a profile up (src/plan/route.cpp; it reports "route").
# The profile names its file, then the precisions a tune of s and d leaves to the built-in entry.
"$tandem" gemm --m 96 --n 96 --k 96 --strategy hybrid --json | grep -q "\"profile\": \"$path" &&
  ok "gemm uses the tuned profile" || bad "gemm does not name the profile"
"$tandem" profile reset | grep -q removed && [ ! -f "$path" ] && [ ! -f "$copy" ] &&
  ok "profile reset (every local copy)" || bad "profile reset"
"$tandem" gemm --m 96 --n 96 --k 96 --strategy hybrid --json | grep -q "\"profile\": \"$TANDEM_PROFILE_DIR" &&
  bad "a reset profile still applies" || ok "after reset no local profile applies"
cp "$keep" "$TANDEM_PROFILE_DIR/exported.json"
"$tandem" profile import "$TANDEM_PROFILE_DIR/exported.json" | grep -q imported && [ -f "$path" ] &&
  ok "profile import" || bad "profile import"
"$tandem" profile import "$TANDEM_PROFILE_DIR/exported.json" --json | json_ok && ok "profile import --json" ||
  bad "profile import --json"
# Coalesced buckets: one timed against the profile's direct kernel, one against another (a later
# tune --direct-only changed it): show marks the second as not applied.
"$py" - "$keep" "$TANDEM_PROFILE_DIR/buckets.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
s = p["precisions"]["s"]
direct = s.get("direct_kernel") or {"KERNEL": 2, "MWG": 16, "NWG": 16, "MDIMC": 8, "NDIMC": 8}
s["direct_kernel"] = direct
tile = dict(direct, MWG=32)
old = dict(direct, PADA=1 - direct.get("PADA", 0))
s["coalesced"] = [
    {"size": 64, "count": 10, "kernel": tile, "gflops": 2, "direct_gflops": 1, "verdict": "faster",
     "note": "", "direct_kernel": direct, "resident": False},
    {"size": 128, "count": 10, "kernel": tile, "gflops": 2, "direct_gflops": 1, "verdict": "faster",
     "note": "", "direct_kernel": old, "resident": False}]
json.dump(p, open(sys.argv[2], "w"))
PY
"$tandem" profile import "$TANDEM_PROFILE_DIR/buckets.json" > /dev/null
out=$("$tandem" profile show)
grep -q "10 x 64^3, ordinary memory: its own" <<<"$out" && [ "$(grep -c "not applied" <<<"$out")" = 1 ] &&
  grep "10 x 128^3" <<<"$out" | grep -q "not applied" &&
  ok "profile show marks a bucket timed against another direct kernel" || bad "profile show buckets: $out"
"$tandem" profile reset --json | json_ok && ok "profile reset --json" || bad "profile reset --json"
# A file that is there but is no profile: a failure while working (exit 1).
echo '{"format": 1' > "$TANDEM_PROFILE_DIR/broken.txt"
expect_status 1 "profile import $TANDEM_PROFILE_DIR/broken.txt"

finish
