#!/usr/bin/env bash
# On the GPU host, from a bundle made here (see docs/journal/2026-11-performance.md, "Issue 14 item
# 5: reference LAPACK through the drop-in on the H100 host"): the drop-in's small-call cost
# (bench/small_calls), then reference LAPACK's dpotrf and dgetrf with OpenBLAS's BLAS and with
# tandem's (LD_PRELOAD), each against OpenBLAS's own LAPACK in the same process
# (bench/lapack_factor). Writes under OUT.
#
#   lapack_host.sh BUNDLE_DIR OUT [SIZES]
set -uo pipefail
b=$1 out=$2 sizes=${3:-8192,16384}
source "$b/env.sh"
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d)
ref=$b/lib/ref/liblapack.so.3
{ date -u; nproc; tandem devices; } > "$out/host.txt" 2>&1
# The H100 is device 1 there (0 is PoCL); check it by name.
TANDEM_DEVICE=$(tandem devices 2>/dev/null | awk '/^ *[0-9]+:/ && /H100|H200/ {sub(":", "", $1); print $1; exit}')
export TANDEM_DEVICE
echo "TANDEM_DEVICE=$TANDEM_DEVICE" >> "$out/host.txt"
small_calls 2,8,32,64,128 21 > "$out/small-calls.txt" 2>&1
lapack_factor "$ref" "${sizes%%,*}" 3 > "$out/lapack-openblas-blas.jsonl" 2> "$out/lapack-openblas-blas.err"
LD_PRELOAD=$b/lib/libtandem_blas.so.0 lapack_factor "$ref" "$sizes" 3 > "$out/lapack-tandem-blas.jsonl"
# The routing from a process of its own: TANDEM_VERBOSE turns the drop-in's straight path for small
# calls off (each call is planned and logged), so its times are not the drop-in's.
TANDEM_VERBOSE=1 LD_PRELOAD=$b/lib/libtandem_blas.so.0 lapack_factor "$ref" "${sizes%%,*}" 3 \
  > "$out/lapack-tandem-verbose.jsonl" 2> "$out/lapack-tandem-verbose.txt"
# Which calls left the CPU: routine, strategy and shape, counted.
awk '/^tandem: dgemm/ {print $2, $6, $3, $4, $5}' "$out/lapack-tandem-verbose.txt" | sort | uniq -c |
  sort -rn > "$out/lapack-tandem-routing.txt"
xz -9 "$out/lapack-tandem-verbose.txt"
