#!/usr/bin/env bash
# The batch phase's few products on an H200: loan 5's points resumed from its log, the few
# products measured now; then auto under that profile on batches of ten, batch_choice on the
# cells the cores keep
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
batch_bench s:128:10,s:256:10,s:512:10,s:1024:10,d:128:10,d:256:10,d:512:10,d:1024:10,s:128:1000,d:128:1000 5 devices > $o/ten.txt 2> $o/ten.err; echo "ten rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
batch_choice s:16:10,s:32:10,s:64:10,s:64:1000,d:64:10,d:128:10,d:16:100000,d:32:20000 301 > $o/choice.txt 2> $o/choice.err; echo "choice rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf f.tar.xz f
cat f/host.txt; grep -E "batches from|\^3:|of them" f/profile.txt | cut -c1-300; grep "^|" f/ten.txt | cut -c1-220; cat f/choice.txt | cut -c1-200
