#!/usr/bin/env bash
# The H200 batch rules' middle counts measured (the points and few products resumed from the
# 16:41 log of results/h200-batch-counts-2026-11-28/3-few-again), then batches between ten
# products and the points' counts from both memories under that profile
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/m; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
cp .gpu/seed.jsonl $P/seed.jsonl
date -u +%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
t0=$(date +%s)
tandem tune --batch-only --precision both --device 1 --batch-kernel-evals 0 --batch-sizes 1024,512,256,128,64,32 --batch-seconds 200 --log $P/seed.jsonl > $o/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - t0 )) s" >> $o/host.txt
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/ 2>/dev/null; cp $P/seed.jsonl $o/tune-log.jsonl
date -u +%T >> $o/host.txt
C1=s:128:32,s:128:64,s:128:100,s:128:234,s:128:500,s:128:1000,s:256:40,s:256:100,d:128:32,d:128:100,d:128:300,d:256:40,d:256:100
C2=s:64:1000,s:64:2000,s:64:5000,s:64:10000,s:64:20000,s:32:2000,s:32:20000,d:64:2000,d:64:5000,d:32:5000
BENCH_RESIDENT_AUTO=1 batch_bench $C1 9 devices > $o/mid.txt 2> $o/mid.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
BENCH_RESIDENT_AUTO=1 batch_bench $C2 7 devices > $o/large.txt 2> $o/large.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf m.tar.xz m
cat m/host.txt; grep -E "of them|\^3:" m/profile.txt | cut -c1-250; grep "^|" m/mid.txt m/large.txt | cut -c1-400
