#!/usr/bin/env bash
# The call that made this folder (nvidia-h200, carry .gpu/cs.tar.xz), from the tree's root. The
# bundle: ../shared/gpu-host/bundle.sh .gpu/cs build/bench/cores_small, built from the working
# tree of c2ad2fb before its cores_small edges were set (the bench passes its own edges).
set -u
tar xJf .gpu/cs.tar.xz -C /tmp && source /tmp/cs/env.sh && export OPENBLAS_CORETYPE=SkylakeX
(nproc; lscpu | head -20) > "$OUT/host.txt" 2>&1
/tmp/cs/bin/cores_small czsd 4,8,12,16,24,32,48,64,96,128 1,4,8,16 5 > "$OUT/cores_small.txt" 2>&1
echo rc=$? >> "$OUT/cores_small.txt"
