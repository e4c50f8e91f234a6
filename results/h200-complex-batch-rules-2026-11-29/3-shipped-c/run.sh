#!/usr/bin/env bash
# The H200 entry as shipped with its c batch rule (an empty profile directory): every strategy on
# c batches around the rule's points and counts, from both memories (BENCH_RESIDENT_AUTO=1); then
# the complex level-3 routines through the drop-in against OpenBLAS's own at n = 4096.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/c3; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem devices; tandem profile show 2>&1 | grep -A3 cgemm; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null 2>&1
b=c:32:20000,c:64:20000,c:128:5000,c:256:2000,c:512:200,c:64:300,c:128:10,c:128:300,c:256:10,c:256:100,c:512:10
BENCH_RESIDENT_AUTO=1 timeout 260 batch_bench $b 5 devices > $o/grid.txt 2> $o/grid.err
echo "grid rc=$? $(date -u +%T)" >> $o/host.txt
timeout 200 level3_bench 4096 3 ordinary c,z > $o/level3.jsonl 2> $o/level3.err
echo "level3 rc=$? $(date -u +%T)" >> $o/host.txt
cp bench/.h200_tmp3.sh $o/run.sh
cat $o/host.txt | tail -8; grep -h "^|" $o/grid.txt; cut -c1-300 $o/level3.jsonl; tail -n 3 $o/grid.err $o/level3.err
