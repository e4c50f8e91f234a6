#!/usr/bin/env bash
# The batch rule on an H200 with the built-in entry, both precisions, then auto under it
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/gpu.txt; date +%T >> $o/gpu.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem tune --batch-only --precision both --device 1 --batch-kernel-evals 0 --batch-sizes 1024,512,256,128,64,32 --batch-seconds 100 > $o/tune.txt 2>&1
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/
batch_bench s:64:20000,s:256:2000,s:128:1000,s:512:10,d:64:20000,d:256:2000 5 devices > $o/grid.txt 2> $o/grid.err
date +%T >> $o/gpu.txt
