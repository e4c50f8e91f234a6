#!/usr/bin/env bash
# zgemm batches on an H200 under the built-in entry: batch_bench's gpu mode stopped at z 256^3 x
# 2000 (its 120 s ran out) in the loan before. Which sizes and counts are slow, and what the batch
# ran (TANDEM_VERBOSE), then the cases that did not finish.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz3; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%T > $o/host.txt
for c in z:256:20 z:256:200 z:128:2000 c:256:2000 z:512:10 z:256:2000; do
  t0=$(date +%s.%N)
  TANDEM_VERBOSE=1 timeout 40 batch_bench $c 1 gpu > $o/v-$c.txt 2> $o/v-$c.err
  echo "$c rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s" >> $o/host.txt
done
timeout 150 batch_bench z:256:2000,z:512:10,z:1024:10 5 gpu > $o/batch-gpu.txt 2> $o/batch-gpu.err
echo "batch gpu rc=$? $(date -u +%T)" >> $o/host.txt
cd $OUT && tar cJf cz3.tar.xz cz3
cat cz3/host.txt; grep -h "^|" cz3/v-*.txt cz3/batch-gpu.txt; for f in cz3/v-*.err; do echo "== $f"; grep -v "^$" $f | cut -c1-300 | head -12; done
