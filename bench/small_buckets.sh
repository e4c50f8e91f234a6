#!/usr/bin/env bash
# Small buckets for the H100 entry's sgemm and dgemm (issues 17, 14 and 13; it now ships sgemm
# from 256 and dgemm from 512): tune them on the GPU host, then check, with that profile, what
# auto and the GPU do at small sizes.
#
#   bash bench/call_phases.sh pack          # here: the bundle (tandem, call_phases, vs_clblast)
#   bash bench/small_buckets.sh tune OUT    # there: tune, export OUT/profile.json
#   bash bench/small_buckets.sh check OUT PROFILE  # there: import PROFILE, check; results in OUT
#   bash bench/small_buckets.sh side OUT PROFILE   # there: the built-in profile and PROFILE in turn
#
# side: SMALL_ROUNDS (3) rounds, each running the built-in profile (an empty profile folder) and
# then PROFILE (imported into another) through call_phases (--check last, both memories, median of
# 200) into side.jsonl, and vs_clblast's clblast_pinned and tandem_gpu_pinned columns (median of
# 200 after 10) at each of SMALL_CHECK into side-SIDE-ROUND.json; then, under bench/cl_trace.c and
# with PROFILE, call_phases (pinned) into traced.jsonl and CLBlast's column into
# clblast-traced-N.txt (OpenCL calls per process at exit).
#
# SMALL_SIZES (512,1024): the buckets; SMALL_SECONDS (420): the tune's budget; SMALL_PRECISION
# (both): s or d, the one precision tuned;
# SMALL_CHECK (256,512,1000,1023,1024): sizes checked; SMALL_ROUNDS (5) rounds of cpu, auto and
# gpu (ordinary memory, and tandem_malloc memory too with SMALL_RESIDENT=1; `tandem --json gemm
# --reps 21`) into rounds.jsonl; then the GPU alone
# from tandem_malloc memory (call_phases) and CLBlast's whole call from pinned memory.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-} out=${2:?OUT}
case "$mode" in tune|check|side) ;; *) echo "usage: $0 tune OUT | check|side OUT PROFILE" >&2; exit 2 ;; esac
mkdir -p "$out"
# shellcheck source=bench/phases_env.sh
source bench/phases_env.sh
dev=nvidia sizes=${SMALL_SIZES:-512,1024} check=${SMALL_CHECK:-256,512,1000,1023,1024}
tandem devices > "$out/devices.txt"
if [ "$mode" = tune ]; then
  # shellcheck disable=SC2046
  tandem tune --device "$dev" --sizes "$sizes" --kernel-size "${sizes%%,*}" --no-model --no-direct \
    $([ -n "${SMALL_PRECISION:-}" ] && echo --precision "$SMALL_PRECISION") \
    --budget-seconds "${SMALL_SECONDS:-420}" --log "$out/tune.jsonl" > "$out/tune.txt" 2>&1
  tail -n 20 "$out/tune.txt"
  tandem profile --device "$dev" export "$out/profile.json"
  exit 0
fi
if [ "$mode" = side ]; then
  # shellcheck disable=SC2034 # read as ${!side}
  builtin=$TANDEM_PROFILE_DIR tuned=$(mktemp -d)
  TANDEM_PROFILE_DIR=$tuned tandem profile --device "$dev" import "${3:?PROFILE}"
  for ((round = 0; round < ${SMALL_ROUNDS:-3}; round++)); do
    for side in builtin tuned; do
      export TANDEM_PROFILE_DIR=${!side}
      call_phases --device "$dev" --sizes "$check" --reps 200 --check last \
        | sed "s/^{/{\"side\": \"$side\", \"round\": $round, /" | tee -a "$out/side.jsonl"
      vs_clblast --device "$dev" --only clblast_pinned,tandem_gpu_pinned --reps 200 --warmup 10 \
        --cases "$(echo "$check" | sed -E 's/([0-9]+)/s:\1:\1:\1/g')" \
        --json "$out/side-$side-$round.json" | grep "^| s" || true
    done
  done
  export TANDEM_PROFILE_DIR=$tuned
  LD_PRELOAD=/tmp/phases/bin/libcl_trace.so call_phases --device "$dev" --sizes "$check" \
    --reps 200 --check last --memory pinned > "$out/traced.jsonl"
  for n in ${check//,/ }; do
    CL_TRACE_AT_EXIT=1 LD_PRELOAD=/tmp/phases/bin/libcl_trace.so vs_clblast --device "$dev" \
      --only clblast_pinned --cases "s:$n:$n:$n" --reps 200 --warmup 10 \
      > "$out/clblast-traced-$n.txt" 2>&1 || true
  done
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
