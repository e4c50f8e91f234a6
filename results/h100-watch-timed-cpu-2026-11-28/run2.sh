#!/usr/bin/env bash
set -u
out=${OUT:-/tmp/out}; mkdir -p "$out"
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d)
TANDEM_DEVICE=$(tandem devices 2>/dev/null | awk '/^ *[0-9]+:/ && /H100|H200/ {sub(":", "", $1); print $1; exit}')
export TANDEM_DEVICE
ref=/tmp/bundle/lib/ref/liblapack.so.3
new=/tmp/bundle/lib/libtandem_blas.so.0
{ date -u; echo TANDEM_DEVICE=$TANDEM_DEVICE; } > "$out/host2.txt" 2>&1
one() {
  local who=$1 r=$2
  case $who in
    alone) lapack_factor "$ref" "$3" 3 d ;;
    new) LD_PRELOAD=$new lapack_factor "$ref" "$3" 3 d ;;
    cpu) TANDEM_STRATEGY=cpu LD_PRELOAD=$new lapack_factor "$ref" "$3" 3 d ;;
  esac | sed "s/^{/{\"who\": \"$who\", \"round\": $r, /"
}
for r in 4 5 6; do
  if [ $((r % 2)) = 1 ]; then order="alone new cpu"; else order="cpu new alone"; fi
  for who in $order; do one $who $r 8192 >> "$out/lapack2.jsonl"; done
done
date -u >> "$out/host2.txt"
for who in alone new; do one $who 1 16384 >> "$out/lapack2-16384.jsonl"; done
date -u >> "$out/host2.txt"
