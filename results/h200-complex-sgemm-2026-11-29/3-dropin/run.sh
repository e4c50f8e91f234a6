#!/usr/bin/env bash
# The drop-in's complex GEMM on an H200 (the entry's c and z from the H100 entry since 2b9a252)
# against NVBLAS and OpenBLAS in the same loan: bench/dropin_host.sh, 3 reps a process, 2 rounds
set -uo pipefail
export TANDEM_PROFILE_DIR=$(mktemp -d) DROPIN_WARMUP=z:4096:4096:4096
timeout 520 bash bench/dropin_host.sh $OUT/dropin c:4096:4096:4096,z:4096:4096:4096,c:8192:8192:8192,z:8192:8192:8192 3
echo "rc=$?"
cp bench/.h100_tmp_dropin.sh $OUT/dropin/run.sh
cat $OUT/dropin/dropin.md; tail -5 $OUT/dropin/dropin.err
