#!/usr/bin/env bash
# Batches of 10-40 on an H200 with the committed entry: each side after a pause (BENCH_SETTLE=0.2,
# as the tune's rounds) and without, to see whether the tune's ten-product sides hold settled
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/s; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
date -u +%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C=d:256:10,d:256:16,d:256:24,d:256:31,d:256:40,s:256:10,s:256:16,s:256:31,s:128:10,s:128:31,d:128:10,d:128:31
BENCH_SETTLE=0.2 BENCH_RESIDENT_AUTO=1 batch_bench $C 7 devices > $o/settled.txt 2> $o/settled.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
BENCH_RESIDENT_AUTO=1 batch_bench $C 7 devices > $o/unsettled.txt 2> $o/unsettled.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf s.tar.xz s
cat s/host.txt; grep "^|" s/settled.txt s/unsettled.txt | cut -c1-400
