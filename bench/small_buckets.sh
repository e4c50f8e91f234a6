#!/usr/bin/env bash
# Buckets below the H100 entry's smallest (2048) for sgemm and dgemm (issues 17 and 14): tune them
# on the GPU host, then check, with that profile, what auto and the GPU do at small sizes.
#
#   bash bench/call_phases.sh pack          # here: the bundle (tandem, call_phases, vs_clblast)
#   bash bench/small_buckets.sh tune OUT    # there: tune, export OUT/profile.json
#   bash bench/small_buckets.sh check OUT PROFILE  # there: import PROFILE, check; results in OUT
#
# SMALL_SIZES (512,1024): the buckets; SMALL_SECONDS (420): the tune's budget, both precisions;
# SMALL_CHECK (256,512,1000,1023,1024): sizes checked; SMALL_ROUNDS (5) rounds of cpu, auto and
# gpu (ordinary memory, and tandem_malloc memory too with SMALL_RESIDENT=1; `tandem --json gemm
# --reps 21`) into rounds.jsonl; then the GPU alone
# from tandem_malloc memory (call_phases) and CLBlast's whole call from pinned memory.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-} out=${2:?OUT}
case "$mode" in tune|check) ;; *) echo "usage: $0 tune OUT | check OUT PROFILE" >&2; exit 2 ;; esac
mkdir -p "$out"
# shellcheck source=bench/phases_env.sh
source bench/phases_env.sh
dev=nvidia sizes=${SMALL_SIZES:-512,1024} check=${SMALL_CHECK:-256,512,1000,1023,1024}
tandem devices > "$out/devices.txt"
if [ "$mode" = tune ]; then
  tandem tune --device "$dev" --sizes "$sizes" --kernel-size "${sizes%%,*}" --no-model --no-direct \
    --budget-seconds "${SMALL_SECONDS:-420}" --log "$out/tune.jsonl" > "$out/tune.txt" 2>&1
  tail -n 20 "$out/tune.txt"
  tandem profile --device "$dev" export "$out/profile.json"
  exit 0
fi
tandem profile --device "$dev" import "${3:?PROFILE}"
for ((round = 0; round < ${SMALL_ROUNDS:-5}; round++)); do
  for n in ${check//,/ }; do
    for memory in ordinary ${SMALL_RESIDENT:+resident}; do
      for strategy in cpu auto gpu; do
        # shellcheck disable=SC2046
        tandem --json gemm --device "$dev" --m "$n" --n "$n" --k "$n" --strategy "$strategy" \
          --reps 21 $([ "$memory" = resident ] && echo --resident) \
          | python3 -c 'import json,sys; j=json.load(sys.stdin); j["round"]=int(sys.argv[1]); j["memory"]=sys.argv[2]; j["asked"]=sys.argv[3]; print(json.dumps(j))' "$round" "$memory" "$strategy" \
          >> "$out/rounds.jsonl"
      done
    done
  done
done
call_phases --device "$dev" --sizes "$check" --reps 200 --memory pinned | tee "$out/phases.jsonl"
for n in ${check//,/ }; do
  vs_clblast --device "$dev" --only clblast_pinned --cases "s:$n:$n:$n" --reps 200 --warmup 10 \
    2>/dev/null | grep "^| s" || true
done | tee "$out/clblast.txt"
