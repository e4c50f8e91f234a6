#!/usr/bin/env bash
# Batches below and above their rule points' counts from tandem_malloc memory on an H200 under
# 962777d: s 64^3 (point at 21,845: the count lines keep fewer on the cores), s 32^3 (87,381)
# and d 64^3 (10,922, dealt above it)
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/l; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; tandem profile show 2>&1 | head -1; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C=s:64:5000,s:64:10000,s:64:20000,s:64:22000,s:32:20000,s:32:90000,d:64:5000,d:64:20000
BENCH_RESIDENT_AUTO=1 batch_bench $C 7 devices > $o/large.txt 2> $o/large.err; echo "rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf l.tar.xz l
cat l/host.txt; grep "^|" l/large.txt | cut -c1-400
