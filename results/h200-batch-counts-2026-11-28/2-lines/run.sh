#!/usr/bin/env bash
# Batches from both memories on an H200 under the count rule (profile::batch_devices_at: the
# few products' side, then the lines through the two measured counts) and a measured
# batch_resident rule deciding alone; then the 31-cell grid from ordinary memory
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem profile show 2>&1 | head -1; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C1=s:128:10,s:128:12,s:128:16,s:128:31,s:256:10,s:256:16,s:256:31,d:128:10,d:128:16,d:128:31,d:256:10,d:256:12,d:256:16,d:256:24,d:256:31
C2=s:32:32,s:32:100,s:32:1000,s:32:20000,s:64:32,s:64:100,s:64:1000,s:128:32,s:128:100,s:128:1000,d:32:100,d:32:1000,d:64:32,d:64:100,d:64:1000,d:128:100,d:128:1000
BENCH_RESIDENT_AUTO=1 batch_bench $C1 11 devices > $o/few.txt 2> $o/few.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
BENCH_RESIDENT_AUTO=1 batch_bench $C2 11 devices > $o/more.txt 2> $o/more.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
G1=s:64:20000,d:64:20000,s:256:2000,d:256:2000,s:16:10,s:16:1000,s:16:100000,s:64:10,s:64:1000,s:64:100000,s:128:10,s:128:1000,s:128:20000,s:256:10,s:256:1000
G2=s:512:10,s:512:1000,s:1024:10,s:1024:100,d:128:5000,d:512:200,d:1024:20,s:32:20000,s:32:10,d:16:100000,d:32:20000,d:64:10,d:128:10,d:256:10,d:512:10,d:1024:10
batch_bench $G1 5 devices > $o/grid1.txt 2> $o/grid1.err; echo "rcg1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
batch_bench $G2 5 devices > $o/grid2.txt 2> $o/grid2.err; echo "rcg2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf r.tar.xz r
cat r/host.txt; grep "^|" r/few.txt r/more.txt | cut -c1-400; grep "^|" r/grid1.txt r/grid2.txt | cut -c1-230
