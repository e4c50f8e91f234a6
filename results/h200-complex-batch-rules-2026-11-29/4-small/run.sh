#!/usr/bin/env bash
# Small complex products from ordinary memory on an H200, the shipped entry (an empty profile
# directory): does the GPU alone beat the cores at 32^3, below the c rule's first point (64^3, the
# cores kept), as batch_bench's grid showed (c 32^3 x 20,000: GPU 220, cores 161 GFLOPS)? Every
# strategy, with a 0.2 s pause before each side (BENCH_SETTLE, as the tune's rounds) and without;
# s 32^3 beside them.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/small; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%FT%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null 2>&1
b=c:32:20000,c:32:5000,c:16:100000,c:48:10000,z:32:20000,z:16:100000,s:32:20000
BENCH_SETTLE=0.2 timeout 150 batch_bench $b 7 devices > $o/settled.txt 2> $o/settled.err
echo "settled rc=$? $(date -u +%T)" >> $o/host.txt
timeout 120 batch_bench $b 7 devices > $o/unsettled.txt 2> $o/unsettled.err
echo "unsettled rc=$? $(date -u +%T)" >> $o/host.txt
cp bench/.h200_tmp4.sh $o/run.sh
cat $o/host.txt; grep -h "^|" $o/settled.txt $o/unsettled.txt; tail -n 2 $o/*.err
