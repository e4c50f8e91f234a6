#!/usr/bin/env bash
# The `tandem` command end to end, in an empty profile directory of its own (hermetic.sh): every
# subcommand, --json output that parses, and clear errors (non-zero exit) for bad arguments.
#
#   cli_test.sh TANDEM
set -u  # no pipefail: `grep -q` may close a pipe early, which is fine here
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
py=/usr/bin/python3
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fails=$((fails + 1)); }
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

# gemm: a checked call, in text and JSON, under each strategy
for s in auto cpu gpu hybrid; do
  out=$("$tandem" gemm --precision d --m 150 --n 70 --k 90 --strategy "$s" --json) &&
    "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] and d["gflops"] > 0, d' "$out" &&
    ok "gemm --strategy $s" || bad "gemm --strategy $s: $out"
done
"$tandem" gemm --m 64 --n 64 --k 64 | grep -q "GFLOPS" && ok "gemm text" || bad "gemm text"
# dynamic balance: the rows in chunks, reported per side
out=$("$tandem" gemm --m 300 --n 64 --k 64 --strategy hybrid --fraction 0.5 --balance dynamic --json) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["ok"] and d["balance"] == "dynamic", d
assert d["gpu_rows"] + d["cpu_rows"] == 300 and sum(x["chunks"] for x in d["devices"]) + d["cpu_chunks"] >= 2, d' "$out" &&
  ok "gemm --balance dynamic" || bad "gemm --balance dynamic: $out"

# bad arguments: a message naming the problem, a non-zero exit
for args in "gemm --m -3" "gemm --precision q" "gemm --strategy best" "gemm --balance greedy" "gemm --kernel MWG" "tune --strategy best" "tune --start FOO" "tune --sizes 0" "profile frobnicate" "profile import" "nosuch"; do
  msg=$("$tandem" $args 2>&1 >/dev/null)
  rc=$?
  [ $rc -ne 0 ] && [ -n "$msg" ] && ok "rejects '$args': $(head -1 <<<"$msg")" || bad "accepted '$args' (rc $rc)"
done
"$tandem" tune --help | grep -q -- "--budget-evals" && ok "tune --help" || bad "tune --help"

# kernel: the source as compiled, the build log and the binary; a set that cannot build says so
kdir="$work/kernel"
out=$("$tandem" kernel --precision d --kernel KERNEL=1,MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,VW=2 --trans-a \
        --out "$kdir" --json) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["built"] and d["binary_bytes"] > 0, d' "$out" &&
  grep -q "^#define USE_DOUBLE 1" "$kdir/kernel.cl" && grep -q "^#define TRANS_A 1" "$kdir/kernel.cl" &&
  grep -q "^#define MWG 32" "$kdir/kernel.cl" && [ -s "$kdir/kernel.bin" ] && [ -f "$kdir/build.log" ] &&
  ok "kernel writes source, log and binary" || bad "kernel: $out"
rm -rf "$kdir"
msg=$("$tandem" kernel --kernel KERNEL=1,MWG=24,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,VW=2 --out "$kdir" 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q "do not fit" <<<"$msg" && grep -q "MWG=24" <<<"$msg" && [ ! -e "$kdir/kernel.bin" ] &&
  ok "kernel rejects a set that cannot tile" || bad "kernel accepted a bad set (rc $rc): $msg"
msg=$("$tandem" kernel --kernel NOSUCH=1 --out "$kdir" 2>&1)
[ $? -ne 0 ] && grep -q "NOSUCH" <<<"$msg" && ok "kernel rejects an unknown parameter" || bad "kernel NOSUCH: $msg"

# tune (tiny), then every profile action
out=$("$tandem" tune --precision s --budget-evals 2 --sizes 64,96 --top-kernels 1 --parts 8 --reps 1 --json 2>/dev/null) &&
  "$py" -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["saved"] and "s" in d["precisions"], d
assert d["tandem_version"] == sys.argv[2], (d["tandem_version"], sys.argv[2])' "$out" "$version" &&
  ok "tune --json, the profile records tandem $version" || bad "tune: $out"
path=$("$tandem" profile path)
[ -f "$path" ] && ok "profile path: $path" || bad "profile path $path does not exist"
"$tandem" profile show | grep -q "sgemm" && ok "profile show" || bad "profile show"
"$tandem" profile show --json | json_ok && ok "profile show --json" || bad "profile show --json"
"$tandem" profile export "$TANDEM_PROFILE_DIR/exported.json" >/dev/null && cmp -s "$path" "$TANDEM_PROFILE_DIR/exported.json" &&
  ok "profile export" || bad "profile export"
keep=$work/kept.json && cp "$path" "$keep"
"$tandem" gemm --m 96 --n 96 --k 96 --json | grep -q "\"profile\": \"$path\"" && ok "gemm uses the tuned profile" ||
  bad "gemm does not name the profile"
"$tandem" profile reset | grep -q removed && [ ! -f "$path" ] && [ ! -f "$TANDEM_PROFILE_DIR/exported.json" ] &&
  ok "profile reset (every local copy)" || bad "profile reset"
"$tandem" gemm --m 96 --n 96 --k 96 --json | grep -q "\"profile\": \"$TANDEM_PROFILE_DIR" &&
  bad "a reset profile still applies" || ok "after reset no local profile applies"
cp "$keep" "$TANDEM_PROFILE_DIR/exported.json"
"$tandem" profile import "$TANDEM_PROFILE_DIR/exported.json" | grep -q imported && [ -f "$path" ] &&
  ok "profile import" || bad "profile import"
echo '{"format": 1' > "$TANDEM_PROFILE_DIR/broken.txt"
msg=$("$tandem" profile import "$TANDEM_PROFILE_DIR/broken.txt" 2>&1) && bad "imported a broken file" ||
  ok "rejects a broken import: $msg"

echo "$fails failed"
[ $fails -eq 0 ]
