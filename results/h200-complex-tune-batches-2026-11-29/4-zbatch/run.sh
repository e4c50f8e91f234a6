#!/usr/bin/env bash
# zgemm batches on an H200 under the built-in entry, in one loan: the GPU path (batch_bench's gpu
# mode) against cuBLAS's strided batched GEMM host to host from pinned memory, then every strategy
# on z 256^3 x 2000 (the loan of cz2 ran out of its time limits before these)
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz4; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
{ date -u +%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $o/host.txt
b=z:256:2000,z:512:10,z:1024:10
timeout 150 batch_bench $b 5 gpu > $o/batch-gpu.txt 2> $o/batch-gpu.err
echo "batch gpu rc=$? $(date -u +%T)" >> $o/host.txt
timeout 60 python3 bench/cublas_batch.py $b 5 > $o/cublas-batch.jsonl 2> $o/cublas-batch.err
echo "cublas rc=$? $(date -u +%T)" >> $o/host.txt
timeout 100 batch_bench z:256:2000 3 devices > $o/batch-devices.txt 2> $o/batch-devices.err
echo "batch devices rc=$? $(date -u +%T)" >> $o/host.txt
cd $OUT && tar cJf cz4.tar.xz cz4
cat cz4/host.txt; grep -h "^|" cz4/batch-*.txt; cut -c1-220 cz4/cublas-batch.jsonl
