#!/usr/bin/env bash
# Under the H200 entry with middle counts (built in): batches on either side of each count where
# the entry's lines change sides, from both memories; then the first half of the grid from
# ordinary memory with seven rounds
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/x; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem profile show 2>&1 | head -1; } > $o/host.txt 2>&1
tandem profile show > $o/profile.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C=s:128:16,s:128:24,s:128:400,s:128:800,s:128:2500,s:256:150,s:256:300,s:256:600,d:128:150,d:128:400,d:128:600,d:128:1500,d:256:60,d:256:200,d:256:300,d:64:500,d:64:1000,s:32:10000,d:32:10000
BENCH_RESIDENT_AUTO=1 batch_bench $C 9 devices > $o/cross.txt 2> $o/cross.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
G1=s:64:20000,d:64:20000,s:256:2000,d:256:2000,s:16:10,s:16:1000,s:16:100000,s:64:10,s:64:1000,s:64:100000,s:128:10,s:128:1000,s:128:20000,s:256:10,s:256:1000
batch_bench $G1 7 devices > $o/grid1.txt 2> $o/grid1.err; echo "rcg1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf x.tar.xz x
cat x/host.txt; grep "^|" x/cross.txt x/grid1.txt | cut -c1-400
