#!/usr/bin/env bash
# On the GPU host, from a bundle made here (docs/journal/2026-11-performance.md, "Issue 14: level
# 3 at n = 1024 and 2048"): the products the level-3 routines' halvings make at n = 1024-4096,
# each as one checked `tandem gemm` on the CPU alone and on the GPU alone from ordinary memory
# (L3_REPS, 7 by default), then bench/level3_bench at L3_SIZES (1024,2048) under
# TANDEM_VERBOSE, with the products' routing counted, and where the bundle has reference LAPACK,
# its dpotrf and dgetrf at L3_LAPACK (8192) through the drop-in and without it
# (bench/lapack_factor). Writes under OUT.
#
#   here:  ../shared/gpu-host/bundle.sh .gpu/l3 build/tandem build/bench/level3_bench \
#            build/bench/lapack_factor
#          mkdir -p .gpu/l3/lib/ref && cp -L /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3 \
#            .gpu/l3/lib/ref/ && cp -L /lib/x86_64-linux-gnu/lib{blas.so.3,gfortran.so.5,quadmath.so.0} \
#            .gpu/l3/lib/ && tar -C .gpu -cJf .gpu/l3.tar.xz l3
#   there: bash bench/level3_host.sh .gpu/l3.tar.xz OUT
set -uo pipefail
tar xJf "$1" -C /tmp && b=/tmp/l3 out=$2
reps=${L3_REPS:-7} sizes=${L3_SIZES:-1024,2048}
source "$b/env.sh"
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d)
{ date -u; nproc; tandem devices; } > "$out/host.txt" 2>&1
# The GPU is not device 0 there (0 is PoCL); take it by name.
TANDEM_DEVICE=$(tandem devices 2>/dev/null | awk '/^ *[0-9]+:/ && /H100|H200/ {sub(":", "", $1); print $1; exit}')
export TANDEM_DEVICE
echo "TANDEM_DEVICE=$TANDEM_DEVICE" >> "$out/host.txt"
# Warm-up: the host's memory grows on first use.
tandem gemm --precision s --m 4096 --n 4096 --k 4096 --strategy cpu --reps 2 > /dev/null 2>&1
# m n k beta of the halvings' products: syrk's (n/2)^2 x n, symm's d1 x n x d2 and the next two
# levels', at n = 1024, 2048, 4096.
shapes=${L3_SHAPES:-"1024,1024,1024,0 512,512,1024,1 512,1024,512,1 256,1024,256,1
1024,1024,2048,1 1024,2048,1024,1 512,2048,512,1 256,2048,256,1 2048,2048,4096,1 2048,4096,2048,1"}
for p in d s; do
  for shape in $shapes; do
    IFS=, read -r m n k beta <<< "$shape"
    for strategy in cpu gpu auto; do
      tandem --json gemm --precision "$p" --m "$m" --n "$n" --k "$k" --beta "$beta" \
        --strategy "$strategy" --reps "$reps" 2>> "$out/products.err" |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))' \
        >> "$out/products.jsonl"
    done
  done
done
TANDEM_VERBOSE=1 level3_bench "$sizes" "$reps" > "$out/level3.jsonl" 2> "$out/level3-verbose.txt"
# Which products left the CPU: precision and routine, strategy and shape, counted.
awk '/^tandem: [sd]gemm/ {print $2, $3, $4, $5, $7, $8}' "$out/level3-verbose.txt" | sort | uniq -c |
  sort -rn > "$out/level3-routing.txt"
xz -9 "$out/level3-verbose.txt"
ref=$b/lib/ref/liblapack.so.3
if [ -f "$ref" ] && [ -n "${L3_LAPACK:-8192}" ]; then
  lapack_factor "$ref" "${L3_LAPACK:-8192}" 3 > "$out/lapack-openblas-blas.jsonl" 2>&1
  LD_PRELOAD=$b/lib/libtandem_blas.so.0 lapack_factor "$ref" "${L3_LAPACK:-8192}" 3 \
    > "$out/lapack-tandem-blas.jsonl" 2>&1
fi
