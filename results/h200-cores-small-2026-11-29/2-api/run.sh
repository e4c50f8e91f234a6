#!/usr/bin/env bash
# Small complex products from ordinary memory on an H200 with the cores' small kernel (the
# shipped entry, an empty profile directory): every strategy on the batches where the cores lost
# to the GPU alone before it (results/h200-complex-batch-rules-2026-11-29/4-small), with a 0.2 s
# pause before each side (BENCH_SETTLE, as the tune's rounds), 5 rounds.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/small-kernel; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%FT%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null 2>&1
b=c:16:100000,z:16:100000,c:32:20000,c:32:5000
BENCH_SETTLE=0.2 timeout 140 batch_bench $b 5 devices > $o/settled.txt 2> $o/settled.err
echo "settled rc=$? $(date -u +%T)" >> $o/host.txt
cp bench/.h200_tmp6.sh $o/run.sh
cat $o/host.txt; grep -h "^|" $o/settled.txt; tail -n 2 $o/settled.err
