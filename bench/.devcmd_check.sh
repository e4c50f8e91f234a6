#!/usr/bin/env bash
# Sanity on the H100 host after the default-set and undrained-share changes.
set -u
out=${OUT:-/tmp/out}
tar xJf .gpu/check.tar.xz -C /tmp && source /tmp/check/env.sh
export OPENBLAS_CORETYPE=SkylakeX
export TANDEM_PROFILE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$out/gpu.txt"
tandem devices > "$out/devices.txt" 2>&1; grep -E "device set|weighs|^  [0-9]:" "$out/devices.txt"
tandem --json devices | python3 -c 'import json,sys; print(json.load(sys.stdin)["sets"])'
for t in gemm_test api_test; do
  timeout 250 $t --gtest_brief=1 > "$out/$t.log" 2>&1; echo "$t rc $?"; tail -n 3 "$out/$t.log"
done
timeout 120 recovery_test --gtest_filter='*Drained*:*Discrete*' > "$out/recovery.log" 2>&1; echo "recovery rc $?"
grep -E "^\[  (FAILED|PASSED|  OK) |Failure" "$out/recovery.log" | head -20
# auto, no device named, a few calls: which device took them
for s in "--m 4096 --n 4096 --k 4096" "--precision d --m 2048 --n 2048 --k 2048"; do
  tandem --json gemm $s --reps 3 | python3 -c 'import json,sys; d=json.load(sys.stdin); r=d.get("report",d); print({k:r.get(k) for k in ("strategy","device","gpu_rows","cpu_rows","gflops","max_error","error")})'
done
