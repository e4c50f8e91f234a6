#!/usr/bin/env bash
# How the cores' batch path scales with its thread count on an H200's host (16 cores): tandem's
# batch under strategy cpu with Options::cpu_threads 1-16 (BENCH_CPU_THREADS), beside OpenBLAS's
# loop, on tiny products where the c and z batches ran at 24 GFLOPS on 16 cores.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/threads; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%FT%T > $o/host.txt
b=c:16:100000,z:16:100000,s:16:100000,d:16:100000,c:32:20000,c:64:5000
for t in 1 2 4 8 16; do
  echo "== threads $t" >> $o/threads.txt
  BENCH_CPU_THREADS=$t BENCH_STRATEGY=cpu timeout 60 batch_bench $b 5 cpu >> $o/threads.txt 2>> $o/threads.err
  echo "threads $t rc=$? $(date -u +%T)" >> $o/host.txt
done
cp bench/.h200_tmp5.sh $o/run.sh
cat $o/host.txt; grep -h "^| [a-z] \|^==" $o/threads.txt; tail -n 2 $o/threads.err
