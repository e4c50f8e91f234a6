#!/usr/bin/env bash
# The s batch rule again on another H200 (the run before kept the cores at 256^3 from ordinary
# memory as too noisy), with 2-tune's profile (its d rule) in place; then auto on the s cells.
# (--reps 9 does not change the batch rule's 5 rounds.)
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
P=$(mktemp -d); export TANDEM_PROFILE_DIR=$P
cp .gpu/NVIDIA_H200-eeecfcf6aa3fdfb7.json $P/   # 2-tune's profile
date +%T > $o/gpu.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem profile show 2>&1 | head -2 >> $o/gpu.txt
tandem tune --batch-only --precision s --device 1 --reps 9 --batch-kernel-evals 0 --batch-sizes 1024,512,256,128,64,32 --batch-seconds 100 > $o/tune.txt 2>&1
tandem profile show > $o/profile.txt 2>&1
cp $P/*.json $o/
batch_bench s:64:20000,s:256:2000,s:128:1000,s:512:10,s:1024:10 5 devices > $o/grid.txt 2> $o/grid.err
date +%T >> $o/gpu.txt
