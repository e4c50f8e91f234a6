#!/usr/bin/env bash
# The batch grid on an H200 under the built-in H200 entry with its few-products points
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/g; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem profile show 2>&1 | head -2; tandem profile show 2>&1 | grep -c "of them (never dealt)"; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 2048 --n 2048 --k 2048 --strategy cpu --reps 3 > /dev/null
C1=s:64:20000,d:64:20000,s:256:2000,d:256:2000,s:16:10,s:16:1000,s:16:100000,s:64:10,s:64:1000,s:64:100000,s:128:10,s:128:1000,s:128:20000,s:256:10,s:256:1000
C2=s:512:10,s:512:1000,s:1024:10,s:1024:100,d:128:5000,d:512:200,d:1024:20,s:32:20000,s:32:10,d:16:100000,d:32:20000,d:64:10,d:128:10,d:256:10,d:512:10,d:1024:10
batch_bench $C1 5 devices > $o/grid1.txt 2> $o/grid1.err; echo "rc1=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
batch_bench $C2 5 devices > $o/grid2.txt 2> $o/grid2.err; echo "rc2=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
# auto against the side it runs, more rounds, on batches of ten
batch_bench d:128:10,d:256:10,d:512:10,s:512:10 21 devices > $o/ten21.txt 2> $o/ten21.err; echo "ten21=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cd $OUT && tar cJf g.tar.xz g
cat g/host.txt; grep "^|" g/grid1.txt g/grid2.txt g/ten21.txt | cut -c1-220
