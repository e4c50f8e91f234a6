#!/usr/bin/env bash
# 1: the c and z sections co-tuned on the H200 (.gpu/tuned-cz.json, the loan before) against the
# ones it borrows from the H100 entry (an empty profile directory), in turn, two rounds: the kernel
# and whole calls from tandem_malloc memory at 1024^3-8192^3. 2: complex batches under the built-in
# entry: the GPU path against cuBLAS's strided batched GEMM host to host from pinned memory, and
# every strategy on four batches.
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz2; mkdir -p $o
T=$(mktemp -d); cp .gpu/tuned-cz.json $T/NVIDIA_H200-eeecfcf6aa3fdfb7.json
E=$(mktemp -d)
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; TANDEM_PROFILE_DIR=$T tandem profile show 2>&1 | head -3; TANDEM_PROFILE_DIR=$E tandem profile show 2>&1 | head -3; } > $o/host.txt 2>&1
TANDEM_PROFILE_DIR=$E tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
cases=c:1024:1024:1024,c:2048:2048:2048,c:4096:4096:4096,c:8192:8192:8192,z:1024:1024:1024,z:2048:2048:2048,z:4096:4096:4096,z:8192:8192:8192
for r in 1 2; do
  for who in builtin tuned; do
    [ $who = tuned ] && P=$T || P=$E
    TANDEM_PROFILE_DIR=$P timeout 150 vs_clblast --cases $cases --reps 5 --warmup 2 \
      --only tandem_kernel,tandem_gpu_pinned > $o/$who-r$r.md 2> $o/$who-r$r.err
    echo "$who r$r rc=$? $(date -u +%T)" >> $o/host.txt
  done
done
b=c:64:20000,c:256:2000,c:512:10,c:1024:10,z:64:20000,z:256:2000,z:512:10,z:1024:10
TANDEM_PROFILE_DIR=$E timeout 120 batch_bench $b 5 gpu > $o/batch-gpu.txt 2> $o/batch-gpu.err
echo "batch gpu rc=$? $(date -u +%T)" >> $o/host.txt
timeout 90 python3 bench/cublas_batch.py $b 5 > $o/cublas-batch.jsonl 2> $o/cublas-batch.err
echo "cublas rc=$? $(date -u +%T)" >> $o/host.txt
TANDEM_PROFILE_DIR=$E timeout 120 batch_bench c:64:20000,c:256:2000,z:64:20000,z:256:2000 3 devices > $o/batch-devices.txt 2> $o/batch-devices.err
echo "batch devices rc=$? $(date -u +%T)" >> $o/host.txt
cd $OUT && tar cJf cz2.tar.xz cz2
cat cz2/host.txt; for f in cz2/*-r*.md; do echo "== $f"; grep "^|" $f | head -14; done; grep "^|" cz2/batch-*.txt; cat cz2/cublas-batch.jsonl | cut -c1-200; tail -3 cz2/*.err
