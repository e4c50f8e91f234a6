#!/usr/bin/env bash
# d 128^3's few products from tandem_malloc memory measured again with the second set (4af0086),
# every other record resumed from loan 2's log; then auto from both memories on batches of 10-24
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/h; mkdir -p $o
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
BENCH_RESIDENT_AUTO=1 batch_bench d:128:10,s:128:10,s:256:10,d:256:10,s:512:10,s:128:24,d:128:24,s:256:24,d:256:24,s:512:24,d:512:24,s:64:20000,d:64:20000,s:256:2000 5 devices > $o/bench.txt 2> $o/bench.err; echo "bench rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf h.tar.xz h
cat h/host.txt; grep -E "batches from tandem_malloc" -A12 h/profile.txt | grep -E "128\^3" -A1 | cut -c1-400; grep "^|" h/bench.txt | cut -c1-260
