#!/usr/bin/env bash
set -uo pipefail
[ -d /tmp/bundle ] || tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d) TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
cases=s:512:10,s:1024:10,d:512:10,d:1024:20,s:512:1000
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $o/gpu.txt
run() { local name=$1; shift
  env "$@" batch_timeline $cases 11 2 2>>$o/err.txt | grep median | sed "s/^/{\"config\": \"$name\", \"round\": $round, \"r\": /; s/\$/}/" >> $o/configs.jsonl; }
for round in 1 2 3; do
  run old TPROBE_TAIL=0 TPROBE_NOINLINE=1
  run new X=1
done
python3 bench/cublas_batch.py $cases 5 > $o/cublas.jsonl 2> $o/cublas.err
TANDEM_PROBE=1 CL_TRACE_TIMELINE=8192 CL_TRACE_PROFILE=1 LD_PRELOAD=/tmp/bundle/bin/libcl_trace.so batch_timeline s:512:10 8 2 > $o/traced-new.jsonl 2> $o/probe-new.txt
python3 bench/batch_timeline.py $o/traced-new.jsonl > $o/summary-new.md 2>&1
cat $o/summary-new.md
