#!/usr/bin/env bash
# Complex batch rules on an H200: tandem tune's batch phase for c (first run) and for z (a second
# run, the first being results/h200-complex-tune-batches-2026-11-29/5-zrule), each with no
# coalesced kernel search and the built-in entry otherwise, each in its own empty profile
# directory; then every strategy on c (or z) 64^3 x 20,000, 128^3 x 5,000 and 256^3 x 2,000 under
# the rule just measured.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/rules; mkdir -p $o
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; tandem devices; } > $o/host.txt 2>&1
W=$(mktemp -d); TANDEM_PROFILE_DIR=$W tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null 2>&1
for p in c z; do
  P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
  timeout 140 tandem tune --batch-only --precision $p --device 1 --batch-kernel-evals 0 --batch-seconds 110 \
    --log $o/tune-$p-log.jsonl > $o/tune-$p.txt 2>&1
  echo "tune $p rc=$? $(date -u +%T)" >> $o/host.txt
  tandem profile show > $o/profile-$p.txt 2>&1; mkdir -p $o/profile-$p; cp $P/*.json $o/profile-$p/ 2>/dev/null
  timeout 115 batch_bench $p:256:2000,$p:128:5000,$p:64:20000 3 devices > $o/devices-$p.txt 2> $o/devices-$p.err
  echo "devices $p rc=$? $(date -u +%T)" >> $o/host.txt
done
cp bench/.h200_tmp1.sh $o/run.sh
cat $o/host.txt; grep -h "^|" $o/devices-*.txt; for p in c z; do grep -i batch $o/profile-$p.txt | cut -c1-200 | head -8; tail -6 $o/tune-$p.txt | cut -c1-200; done; tail -2 $o/*.err
