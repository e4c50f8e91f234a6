#!/usr/bin/env bash
# The H200's few-products sides measured again (the points resumed from loan 5's log, the
# "batch few" records left out), then batches of 10-1,000 from both memories under that profile
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/f; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
cp .gpu/seed.jsonl $P/seed.jsonl
date -u +%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
t0=$(date +%s)
tandem tune --batch-only --precision both --device 1 --batch-kernel-evals 0 --batch-sizes 1024,512,256,128,64,32 --batch-seconds 100 --log $P/seed.jsonl > $o/tune.txt 2>&1
echo "tune rc=$? $(( $(date +%s) - t0 )) s" >> $o/host.txt
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/ 2>/dev/null; cp $P/seed.jsonl $o/tune-log.jsonl
date -u +%T >> $o/host.txt
C1=s:128:10,s:128:12,s:128:16,s:128:31,s:256:10,s:256:16,s:256:31,d:128:10,d:128:16,d:128:31,d:256:10,d:256:12,d:256:16,d:256:24,d:256:31
C2=s:32:32,s:32:100,s:32:1000,s:64:32,s:64:100,s:64:1000,s:128:32,s:128:100,s:128:1000,d:32:100,d:64:32,d:64:100,d:128:100,d:256:40,d:256:100
BENCH_RESIDENT_AUTO=1 batch_bench $C1 11 devices > $o/few.txt 2> $o/few.err; echo "rc1=$?" >> $o/host.txt
BENCH_RESIDENT_AUTO=1 batch_bench $C2 11 devices > $o/more.txt 2> $o/more.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf f.tar.xz f
cat f/host.txt; grep -E "few products|\^3:" f/profile.txt | cut -c1-250; grep "^|" f/few.txt f/more.txt | cut -c1-400
