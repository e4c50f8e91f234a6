#!/usr/bin/env bash
# Complex batches on an H200, the GPU path against CLBlast's and cuBLAS's strided batched GEMM,
# one loan: batch_bench's gpu mode (tandem under strategy gpu from tandem_malloc and ordinary
# memory, the built-in entry), then clblast_batch (GemmStridedBatched host to host from pinned
# memory, and the kernel alone), then bench/cublas_batch.py (torch.bmm, TF32 off, pinned).
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/vs; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
{ date -u +%FT%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; tandem devices; } > $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null 2>&1
b=c:64:20000,c:256:2000,c:512:10,c:1024:10,z:64:20000,z:256:2000,z:512:10,z:1024:10
timeout 220 batch_bench $b 5 gpu > $o/batch-gpu.txt 2> $o/batch-gpu.err
echo "batch gpu rc=$? $(date -u +%T)" >> $o/host.txt
timeout 140 clblast_batch $b 5 NVIDIA > $o/clblast.jsonl 2> $o/clblast.err
echo "clblast rc=$? $(date -u +%T)" >> $o/host.txt
timeout 130 python3 bench/cublas_batch.py $b 5 > $o/cublas.jsonl 2> $o/cublas.err
echo "cublas rc=$? $(date -u +%T)" >> $o/host.txt
cp bench/.h200_tmp2.sh $o/run.sh
cat $o/host.txt; grep -h "^|" $o/batch-gpu.txt; cut -c1-220 $o/clblast.jsonl $o/cublas.jsonl; tail -3 $o/*.err
