#!/usr/bin/env bash
# c and z co-tuned on an H200 (kernels, buckets' splits, cost model, direct kernel; no batch
# phase), starting from the profile that applies there before (the H100 entry's c and z sections)
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem devices; tandem profile show 2>&1 | head -3; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
for p in c z; do
  t0=$(date +%s)
  timeout 275 tandem tune --precision $p --device 1 --no-batch --budget-evals 30 --budget-seconds 235 \
    --sizes 1024,2048,4096 --kernel-size 4096 --log $o/tune-log.jsonl > $o/tune-$p.txt 2> $o/tune-$p.err
  echo "tune $p rc=$? $(( $(date +%s) - t0 )) s" >> $o/host.txt
done
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/ 2>/dev/null
date -u +%T >> $o/host.txt
cd $OUT && tar cJf cz.tar.xz cz
cat cz/host.txt | tail -4; tail -30 cz/tune-c.txt | cut -c1-200; tail -30 cz/tune-z.txt | cut -c1-200
