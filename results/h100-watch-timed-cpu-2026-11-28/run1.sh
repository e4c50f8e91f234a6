#!/usr/bin/env bash
# Temporary (never committed): reference LAPACK through the drop-in, before and after the watch's
# timed CPU call, against OpenBLAS alone, processes in turn (none under TANDEM_VERBOSE, which turns
# the drop-in's straight path off); then one verbose process of each build for the watch's lines.
set -u
out=${OUT:-/tmp/out}; mkdir -p "$out"
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
mkdir -p /tmp/old && tar xJf .gpu/old.tar.xz -C /tmp/old
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d)
TANDEM_DEVICE=$(tandem devices 2>/dev/null | awk '/^ *[0-9]+:/ && /H100|H200/ {sub(":", "", $1); print $1; exit}')
export TANDEM_DEVICE
ref=/tmp/bundle/lib/ref/liblapack.so.3
new=/tmp/bundle/lib/libtandem_blas.so.0
old=/tmp/old/libtandem_blas.so.0
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; tandem devices; echo TANDEM_DEVICE=$TANDEM_DEVICE; } > "$out/host.txt" 2>&1
lapack_factor "$ref" 4096 1 > /dev/null 2>&1   # warm-up: memory and the GPU
LD_PRELOAD=$new lapack_factor "$ref" 4096 1 > /dev/null 2>&1
one() {  # who round size precision
  local who=$1 r=$2
  case $who in
    alone) lapack_factor "$ref" "$3" 3 "$4" ;;
    new) LD_PRELOAD=$new lapack_factor "$ref" "$3" 3 "$4" ;;
    old) LD_LIBRARY_PATH=/tmp/old:$LD_LIBRARY_PATH LD_PRELOAD=$old lapack_factor "$ref" "$3" 3 "$4" ;;
    cpu) TANDEM_STRATEGY=cpu LD_PRELOAD=$new lapack_factor "$ref" "$3" 3 "$4" ;;
    new-verbose) TANDEM_VERBOSE=1 LD_PRELOAD=$new lapack_factor "$ref" "$3" 3 "$4" 2> "$out/$who-$4.txt" ;;
    old-verbose) TANDEM_VERBOSE=1 LD_LIBRARY_PATH=/tmp/old:$LD_LIBRARY_PATH LD_PRELOAD=$old lapack_factor "$ref" "$3" 3 "$4" 2> "$out/$who-$4.txt" ;;
  esac | sed "s/^{/{\"who\": \"$who\", \"round\": $r, /"
}
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="alone new old cpu"; else order="cpu old new alone"; fi
  for who in $order; do one $who $r 8192 d >> "$out/lapack.jsonl"; done
  date -u >> "$out/host.txt"
done
for r in 1 2; do
  for who in alone new old; do one $who $r 4096 z >> "$out/lapack-z.jsonl"; done
done
one new-verbose 1 8192 d >> "$out/lapack-verbose.jsonl"
one old-verbose 1 8192 d >> "$out/lapack-verbose.jsonl"
one new-verbose 1 4096 z >> "$out/lapack-verbose.jsonl"
date -u >> "$out/host.txt"
grep -h "auto: " "$out"/new-verbose-*.txt > "$out/watch-new.txt"
grep -h "auto: " "$out"/old-verbose-*.txt > "$out/watch-old.txt"
tar -C "$out" -cJf "$out/verbose.tar.xz" $(cd "$out" && ls *-verbose-*.txt) && rm -f "$out"/*-verbose-*.txt
