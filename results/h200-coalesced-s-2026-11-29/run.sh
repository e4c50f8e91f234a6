#!/usr/bin/env bash
# The coalesced kernel's buckets for single precision on an H200 (tandem tune's batch phase, the
# built-in H200 entry otherwise), then the profile it saved
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/s; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem devices; tandem profile show 2>&1 | head -2; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
t0=$(date +%s)
timeout 530 tandem tune --batch-only --precision s --device 1 --batch-seconds 500 --log $o/tune-log.jsonl > $o/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - t0 )) s" >> $o/host.txt
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/ 2>/dev/null
date -u +%T >> $o/host.txt
cd $OUT && tar cJf s.tar.xz s
cat s/host.txt; grep -i -E "coalesced|batch" s/profile.txt | cut -c1-250 | head -40; tail -5 s/tune.txt
