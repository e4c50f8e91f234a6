#!/usr/bin/env bash
# zgemm's batch rule on an H200 (tandem tune's batch phase, no coalesced kernel search, the
# built-in entry otherwise), then every strategy on z 256^3 x 2000 and 64^3 x 20000 under it
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz5; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
date -u +%T > $o/host.txt
timeout 140 tandem tune --batch-only --precision z --device 1 --batch-kernel-evals 0 --batch-seconds 110 \
  --log $o/tune-log.jsonl > $o/tune.txt 2>&1
echo "tune rc=$? $(date -u +%T)" >> $o/host.txt
tandem profile show > $o/profile.txt 2>&1; cp $P/*.json $o/ 2>/dev/null
timeout 75 batch_bench z:256:2000,z:64:20000 3 devices > $o/batch-devices.txt 2> $o/batch-devices.err
echo "batch devices rc=$? $(date -u +%T)" >> $o/host.txt
cd $OUT && tar cJf cz5.tar.xz cz5
cat cz5/host.txt; grep -h "^|" cz5/batch-*.txt; grep -i "batch" cz5/profile.txt | cut -c1-250 | head; tail -12 cz5/tune.txt | cut -c1-250
