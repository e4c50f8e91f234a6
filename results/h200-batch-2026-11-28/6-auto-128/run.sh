#!/usr/bin/env bash
# auto under loan 5's rules (dealt at 128^3 from ordinary memory) against cpu and gpu
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
cp .gpu/NVIDIA_H200-eeecfcf6aa3fdfb7.json $P/   # 5-tune-sets' profile
date +%T > $o/gpu.txt
tandem profile show 2>&1 | head -1 >> $o/gpu.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
batch_bench s:128:1000,s:128:20000,d:128:5000,s:256:2000 5 devices > $o/grid.txt 2> $o/grid.err
date +%T >> $o/gpu.txt
cd $OUT && tar cJf r.tar.xz r
cat r/gpu.txt; grep "^|" r/grid.txt; tail -2 r/grid.err
