#!/usr/bin/env bash
# The GPU path on the H200, batch_bench's gpu mode four times, then cuBLAS (torch.bmm, TF32 off)
# and CLBlast (GemmStridedBatched) host to host from pinned memory on the same cases. As run, the
# second and fourth batch_bench passes had a local profile meant to carry the H100 entry's direct
# kernels (its merge step failed: seed.txt), so all four ran the built-in H200 entry's kernels
# (the seed's one s batch point at 1024^3 changes nothing strategy gpu runs).
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt
tandem devices >> $o/gpu.txt 2>&1; nproc >> $o/gpu.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
cases=s:64:20000,s:128:20000,s:256:2000,s:512:10,s:512:1000,s:1024:10,d:64:20000,d:256:2000,d:512:200,d:1024:20
for pass in 1 2 3 4; do
  echo "== pass $pass $(date +%T)" >> $o/bb.txt
  batch_bench $cases 5 gpu >> $o/bb.txt 2>> $o/bb.err
done
python3 bench/cublas_batch.py $cases 5 > $o/cublas.jsonl 2> $o/cublas.err
clblast_batch $cases 5 NVIDIA > $o/clblast.txt 2> $o/clblast.err
