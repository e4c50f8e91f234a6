#!/usr/bin/env bash
# temporary: batch_bench gpu mode (ordinary and tandem_malloc memory), old vs new by env toggles of the bundle
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d) TANDEM_DEVICE=1
o=$OUT/r; mkdir -p $o
cases=s:512:10,s:1024:10,d:512:10,s:256:200
for round in 1 2; do
  echo "== round $round old" >> $o/bb.txt
  TPROBE_TAIL=0 TPROBE_NOINLINE=1 batch_bench $cases 5 gpu >> $o/bb.txt 2>&1
  echo "== round $round new" >> $o/bb.txt
  batch_bench $cases 5 gpu >> $o/bb.txt 2>&1
done
grep -v '^{' $o/bb.txt
