#!/usr/bin/env bash
# Complex calls on an H200 under the built-in entry that now takes the H100's c and z sections
# (2b9a252), against cuBLAS in the same loan; and sgemm's H200 entry kernel against the H100
# entry's cp.async kernel at 4096^3 and 8192^3
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/cz; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%T > $o/host.txt
nvidia-smi --query-gpu=name,driver_version --format=csv >> $o/host.txt
tandem devices >> $o/host.txt 2>&1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 8192 --n 8192 --k 4096 --strategy cpu --reps 1 > /dev/null
tandem profile show > $o/profile.txt 2>&1
TANDEM_VERBOSE=1 tandem gemm --precision z --m 2048 --n 2048 --k 2048 --strategy auto --reps 3 > $o/zverbose.txt 2>&1
CZ=c:4096:4096:4096,c:8192:8192:8192,z:4096:4096:4096,z:8192:8192:8192
timeout 200 vs_clblast --cases $CZ --reps 5 --warmup 2 --only tandem_kernel,tandem_gpu_pinned,tandem_gpu_pageable,tandem_auto > $o/cz.md 2> $o/cz.err; echo "cz rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
python3 bench/cublas.py --cases $CZ --reps 5 > $o/cublas-device.md 2>&1; echo "cub rc=$?" >> $o/host.txt
python3 bench/cublas.py --cases $CZ --reps 5 --memory pinned > $o/cublas-pinned.md 2>&1
date -u +%T >> $o/host.txt
S=s:4096:4096:4096,s:8192:8192:8192
K=AK=0,A_T=1,B_T=0,CA=2,DB=0,KERNEL=1,KUNROLL=16,KWG=16,MDIMC=16,MWG=128,NDIMC=16,NV_MAXRREG=255,NWG=256,SA=1,SB=1,STRIDED=1,VW=4,VWM=4,VWN=4
timeout 100 vs_clblast --cases $S --reps 5 --warmup 2 --only tandem_kernel > $o/s-entry.md 2>&1
timeout 100 vs_clblast --cases $S --reps 5 --warmup 2 --only tandem_kernel --kernel $K > $o/s-ca2.md 2>&1
timeout 100 vs_clblast --cases $S --reps 5 --warmup 2 --only tandem_kernel > $o/s-entry2.md 2>&1
python3 bench/cublas.py --cases $S --reps 5 > $o/s-cublas.md 2>&1
date -u +%T >> $o/host.txt
cp bench/.h100_tmp_cz.sh $o/run.sh
cd $OUT && tar cJf cz.tar.xz cz
cat cz/host.txt; grep -iE "origin|profile:" cz/profile.txt | head -5; grep -E "strategy|engine|codelet" cz/zverbose.txt | head -5
grep -E "tandem_|^\| [scz] " cz/cz.md | head -40; grep -E "^[scz] .*: [0-9]" cz/cublas-*.md cz/s-cublas.md; grep -E "tandem_kernel" cz/s-*.md
