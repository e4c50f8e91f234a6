#!/usr/bin/env bash
# Under the H200 entry with middle counts (built in): the batches of 32-100 from loan 1 again, from
# both memories; then the second half of the grid from ordinary memory with seven rounds
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/y; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem profile show 2>&1 | head -1; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C=s:128:32,s:128:64,s:128:100,d:128:32,d:128:100,d:256:40,s:64:5000,s:64:20000
BENCH_RESIDENT_AUTO=1 batch_bench $C 9 devices > $o/again.txt 2> $o/again.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
G2=s:512:10,s:512:1000,s:1024:10,s:1024:100,d:128:5000,d:512:200,d:1024:20,s:32:20000,s:32:10,d:16:100000,d:32:20000,d:64:10,d:128:10,d:256:10,d:512:10,d:1024:10
batch_bench $G2 7 devices > $o/grid2.txt 2> $o/grid2.err; echo "rcg2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf y.tar.xz y
cat y/host.txt; grep "^|" y/again.txt y/grid2.txt | cut -c1-400
