#!/usr/bin/env bash
# The batch phase with a second set of rounds where the first is too noisy (12a5b28), on an H200
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
date +%T > $o/gpu.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
t0=$(date +%s)
tandem tune --batch-only --precision both --device 1 --batch-kernel-evals 0 --batch-sizes 1024,512,256,128,64,32 --batch-seconds 100 > $o/tune.txt 2>&1
echo "tune $(( $(date +%s) - t0 )) s" >> $o/tune.txt
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $P/*.jsonl $o/ 2>/dev/null
date +%T >> $o/gpu.txt
cd $OUT && tar cJf r.tar.xz r
tail -1 r/tune.txt; grep -E "batches from|\^3:" r/profile.txt | cut -c1-400
