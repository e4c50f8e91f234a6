#!/usr/bin/env bash
# temporary: batch timeline of s 512^3 x 10 and the sgemm kernel's SASS
set -uo pipefail
tar xJf .gpu/bundle.tar.xz -C /tmp; source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=$(mktemp -d)
o=$OUT/r; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt
tandem devices >> $o/gpu.txt 2>&1
export TANDEM_DEVICE=1
tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
# sass of the entry's sgemm kernel (the 8192 bucket's / gpu_kernel)
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
k=$o/kernel; 
tandem kernel --precision s --trans-a --out-dir $k > $k.txt 2>&1 || true
tandem kernel --precision s --out-dir $k-nn >> $k.txt 2>&1 || true
for d in $k $k-nn; do
  tr -d '\000' < $d/kernel.bin > $d/kernel.ptx
  $ptxas -arch=sm_90 -v $d/kernel.ptx -o $d/kernel.cubin >> $k.txt 2>&1
  $cuobjdump -sass $d/kernel.cubin > $d/kernel.sass 2>&1
  awk '/Function : gemm/{f=1} /Function : transpose/{f=0} f' $d/kernel.sass | grep -oE '^ +/\*[0-9a-f]{4}\*/ +[A-Z][A-Z0-9._]*' | awk '{print $2}' | sort | uniq -c | sort -rn | head -40 >> $k.txt
done
# batch: untraced, then traced
batch_timeline s:512:10,s:1024:10,s:512:1000 15 3 > $o/plain.jsonl 2> $o/plain.err
CL_TRACE_TIMELINE=8192 CL_TRACE_PROFILE=1 LD_PRELOAD=/tmp/bundle/bin/libcl_trace.so batch_timeline s:512:10,s:1024:10 15 3 > $o/traced.jsonl 2> $o/traced.err
python3 bench/cublas_batch.py s:512:10,s:1024:10,s:512:1000 5 > $o/cublas.jsonl 2> $o/cublas.err
batch_timeline s:512:10,s:1024:10,s:512:1000 15 3 > $o/plain2.jsonl 2>> $o/plain.err
python3 bench/batch_timeline.py $o/traced.jsonl > $o/summary.md 2>&1
grep median $o/plain.jsonl $o/plain2.jsonl >> $o/summary.md
cat $o/cublas.jsonl >> $o/summary.md
cd $OUT && tar cJf r.tar.xz r && rm -rf r/kernel r/kernel-nn
cat $OUT/r/summary.md; cat $OUT/r/kernel.txt | head -120
