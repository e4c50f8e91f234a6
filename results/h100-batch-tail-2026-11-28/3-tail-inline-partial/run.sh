#!/usr/bin/env bash
# temporary: tail rule + inline device side, against the old behaviour (env toggles)
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d) TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
cases=s:512:10,s:1024:10,s:512:1000,s:1024:100,s:256:2000,s:64:20000,s:128:20000,d:256:2000,d:512:200,d:1024:20
run() { # name envs...
  local name=$1; shift
  env "$@" batch_timeline $cases 11 2 2>>$o/err.txt | grep median | sed "s/^/{\"config\": \"$name\", \"round\": $round, \"r\": /; s/\$/}/" >> $o/configs.jsonl
}
for round in 1 2 3; do
  run old TPROBE_TAIL=0 TPROBE_NOINLINE=1
  run new X=1
  run tail_only TPROBE_NOINLINE=1
done
TANDEM_PROBE=1 CL_TRACE_TIMELINE=8192 CL_TRACE_PROFILE=1 LD_PRELOAD=/tmp/bundle/bin/libcl_trace.so batch_timeline s:512:10 8 2 > $o/traced-new.jsonl 2> $o/probe-new.txt
python3 bench/batch_timeline.py $o/traced-new.jsonl > $o/summary-new.md 2>&1
python3 bench/cublas_batch.py $cases 5 > $o/cublas.jsonl 2> $o/cublas.err
for round in 1; do
  TPROBE_TAIL=0 TPROBE_NOINLINE=1 batch_bench s:512:10,s:256:2000,d:512:200 5 gpu > $o/bb-old.txt 2>&1
  batch_bench s:512:10,s:256:2000,d:512:200 5 gpu > $o/bb-new.txt 2>&1
done
cd $OUT && tar cJf r.tar.xz r
python3 - <<'PY'
import json,collections
d=collections.defaultdict(list)
for l in open('r/configs.jsonl'):
    r=json.loads(l); d[(r['r']['case'],r['config'])].append(r['r']['median_s']*1e3)
cub={f"{r['precision']}:{r['n']}:{r['count']}":r['cublas_pinned_s']*1e3 for r in map(json.loads,open('r/cublas.jsonl'))}
for case in dict.fromkeys(k[0] for k in d):
    print(case, 'cublas %.3f'%cub.get(case,0), ' '.join(f"{c}: "+'/'.join('%.3f'%x for x in d[(case,c)]) for c in ('old','new','tail_only')))
PY
cat r/summary-new.md; tail -12 r/bb-old.txt r/bb-new.txt; tail -3 r/err.txt
