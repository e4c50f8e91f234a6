#!/usr/bin/env bash
# Batches from tandem_malloc memory on an H200 with a measured batch_resident rule deciding alone
# (no single call of the whole work asked; the tree of 962777d before the lines were added, so no
# count kept a batch on the cores): auto against cpu, gpu and hybrid from that memory
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem profile show 2>&1 | head -1; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C1=s:128:10,s:128:16,s:128:31,s:256:10,s:256:16,s:256:31,d:128:10,d:128:16,d:128:31,d:256:16
C2=s:32:32,s:32:100,s:32:1000,s:32:20000,s:64:32,s:64:100,s:64:1000,s:128:32,s:128:100,s:128:1000,d:32:100,d:32:1000,d:64:100,d:64:1000,d:128:100
BENCH_RESIDENT_AUTO=1 batch_bench $C1 7 devices > $o/few.txt 2> $o/few.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
BENCH_RESIDENT_AUTO=1 batch_bench $C2 7 devices > $o/more.txt 2> $o/more.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf r.tar.xz r
cat r/host.txt; grep "^|" r/few.txt r/more.txt | cut -c1-400
