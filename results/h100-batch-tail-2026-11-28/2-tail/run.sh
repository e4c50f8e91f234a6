#!/usr/bin/env bash
# temporary: the tail rule for unstaged stages, and host probes
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d) TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
cases=s:512:10,s:1024:10,s:512:1000,s:1024:100,s:256:2000,s:64:20000,d:512:200,d:1024:20
for round in 1 2; do
  for t in 0 4 2; do
    TPROBE_TAIL=$t batch_timeline $cases 11 2 2>>$o/err.txt | grep median | sed "s/^/{\"tail\": $t, \"round\": $round, \"r\": /; s/\$/}/" >> $o/tail.jsonl
  done
done
for t in 0 4; do
  TANDEM_PROBE=1 TPROBE_TAIL=$t CL_TRACE_TIMELINE=8192 CL_TRACE_PROFILE=1 LD_PRELOAD=/tmp/bundle/bin/libcl_trace.so batch_timeline s:512:10,s:1024:10 8 2 > $o/traced-$t.jsonl 2> $o/probe-$t.txt
  python3 bench/batch_timeline.py $o/traced-$t.jsonl > $o/summary-$t.md 2>&1
done
python3 bench/cublas_batch.py $cases 5 > $o/cublas.jsonl 2> $o/cublas.err
cd $OUT && tar cJf r.tar.xz r
cat r/tail.jsonl; cat r/summary-*.md; cat r/cublas.jsonl; tail -3 r/err.txt
