#!/usr/bin/env bash
# Batches of 10-31 products with the committed H200 entry (928d24b): where the sides cross
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/c; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%T; tandem profile show 2>&1 | head -1; } > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
BENCH_RESIDENT_AUTO=1 batch_bench d:256:10,d:256:12,d:256:16,d:256:20,d:256:24,d:256:31,s:256:16,s:256:31,d:128:16,d:128:31,s:128:31,s:512:10,d:512:10 7 devices > $o/counts.txt 2> $o/counts.err; echo "rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf c.tar.xz c
cat c/host.txt; grep "^|" c/counts.txt | cut -c1-260
