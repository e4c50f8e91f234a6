#!/usr/bin/env bash
# The built-in H200 entry with 2-tune's d rules and 3-tune-s's s rules (empty profile dir): auto on the
# four target cells; and the first call of a fresh process under auto, under TANDEM_VERBOSE
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date +%T > $o/first.txt
for i in 1 2; do
  echo "== fresh process $i" >> $o/first.txt
  TANDEM_VERBOSE=1 tandem gemm --precision d --m 4096 --n 4096 --k 4096 --strategy auto --reps 3 >> $o/first.txt 2>&1
done
echo "== fresh process, s" >> $o/first.txt
TANDEM_VERBOSE=1 tandem gemm --precision s --m 4096 --n 4096 --k 4096 --strategy auto --reps 3 >> $o/first.txt 2>&1
tandem profile show > $o/profile.txt 2>&1
batch_bench s:64:20000,s:256:2000,d:64:20000,d:256:2000 5 devices > $o/grid.txt 2> $o/grid.err
date +%T >> $o/first.txt
cd $OUT && tar cJf r.tar.xz r
head -3 r/profile.txt; cat r/first.txt | cut -c1-260 | head -90; grep "^|" r/grid.txt; tail -3 r/grid.err
