#!/usr/bin/env bash
# The H200 entry's s section with the H100 entry's cp.async kernel (gpu_kernel and the 8192 bucket):
# the kernel and whole calls at 4096^3 and 8192^3 against cuBLAS in the same loan; and the CPU
# alone (OpenBLAS, 16 cores) on complex calls, where auto kept them before 2b9a252
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_DEVICE=1
o=$OUT/s; mkdir -p $o
export TANDEM_PROFILE_DIR=$(mktemp -d)
date -u +%T > $o/host.txt
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
tandem gemm --precision d --m 8192 --n 8192 --k 4096 --strategy cpu --reps 1 > /dev/null
S=s:4096:4096:4096,s:8192:8192:8192
timeout 200 vs_clblast --cases $S --reps 5 --warmup 2 --only tandem_kernel,tandem_gpu_pinned,tandem_gpu_pageable,tandem_auto > $o/s.md 2>&1; echo "s rc=$?" >> $o/host.txt
python3 bench/cublas.py --cases $S --reps 5 > $o/s-cublas-device.md 2>&1
python3 bench/cublas.py --cases $S --reps 5 --memory pinned > $o/s-cublas-pinned.md 2>&1
date -u +%T >> $o/host.txt
timeout 150 vs_clblast --cases c:4096:4096:4096,z:4096:4096:4096 --reps 3 --warmup 1 --only openblas > $o/cz-cpu.md 2>&1; echo "cpu rc=$?" >> $o/host.txt
date -u +%T >> $o/host.txt
cp bench/.h100_tmp_s.sh $o/run.sh
cd $OUT && tar cJf s.tar.xz s
cat s/host.txt; grep -E "^\| [scz] " s/s.md s/cz-cpu.md | head -20; grep -E "^[scz] .*: [0-9]" s/s-cublas-*.md
