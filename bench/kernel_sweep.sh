#!/usr/bin/env bash
# Kernel time of each candidate at one size, from tandem_malloc memory, through `tandem gemm`
# (strategy gpu, one process a candidate, median of REPS calls after a warm-up, every call
# checked): one line per candidate, "precision size kernel_us call_us ok kernel".
#
#   bash bench/kernel_sweep.sh FILE SIZE [REPS] [LIMIT_S] > out.txt   # on the GPU host
#
# FILE: lines "s|d PARAMS" (PARAMS as `--kernel` takes them, "-" for the profile's own), '#'
# comments; bench/small_kernel_candidates.py writes one. SWEEP_DEVICE (nvidia) selects the device;
# LIMIT_S (600) stops the sweep once that many seconds have passed. A failed build or check
# prints "FAILED" and its message goes to stderr.
set -uo pipefail
file=${1:?FILE} size=${2:?SIZE} reps=${3:-15} limit=${4:-600}
start=$(date +%s)
while read -r prec kernel; do
  case "$prec" in '' | '#'*) continue ;; esac
  if [ $(($(date +%s) - start)) -gt "$limit" ]; then
    echo "# stopped after ${limit} s, before $prec $kernel"
    break
  fi
  args=(gemm --device "${SWEEP_DEVICE:-nvidia}" --precision "$prec" --m "$size" --n "$size"
        --k "$size" --strategy gpu --resident --reps "$reps" --json)
  [ "$kernel" = "-" ] || args+=(--kernel "$kernel")
  if r=$(timeout 60 tandem "${args[@]}"); then
    echo "$r" | python3 -c 'import json, sys
j = json.load(sys.stdin)
print("%s %s %.1f %.1f %s %s" % (sys.argv[1], sys.argv[2], j["kernel_seconds"] * 1e6,
      j["seconds"] * 1e6, j["ok"], j["kernel"].replace(" ", ",")))' "$prec" "$size"
  else
    echo "$prec $size FAILED $kernel"
  fi
done < "$file"
