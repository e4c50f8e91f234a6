set -u
mkdir -p /tmp/A && tar xJf .gpu/bundle.tar.xz -C /tmp/A && source /tmp/A/bundle/env.sh
export OPENBLAS_CORETYPE=SkylakeX TANDEM_PROFILE_DIR=/tmp/empty; mkdir -p /tmp/empty
B=/tmp/A/bundle/bin
T=$OUT/tests.txt
{ echo "== $(date -u +%H:%M:%S) resident_test on the GPU"; timeout 200 $B/resident_test; echo "rc=$?"
  for s in gpu hybrid auto cpu; do echo "== plan_c_test $s"; TANDEM_STRATEGY=$s TANDEM_VERBOSE=1 timeout 60 $B/plan_c_test 2>&1 | grep -v "^tandem: [sd]gemm" ; echo "rc=$?"; done
  for s in gpu hybrid; do echo "== fork_test $s"; TANDEM_STRATEGY=$s TANDEM_VERBOSE=1 timeout 60 $B/fork_test > /tmp/f.out 2>/tmp/f.err; echo "rc=$?"; cat /tmp/f.out; grep -c "B=resident" /tmp/f.err; done
} > $T 2>&1
P=$OUT/plan.txt
{ for p in s d; do echo "== $(date -u +%H:%M:%S) plan_bench $p 1024,4096 21 auto"; $B/plan_bench $p 1024,4096 21 auto; echo "rc=$?"; done
  echo "== $(date -u +%H:%M:%S) cublas.py pinned"; python3 bench/cublas.py --cases s:1024:1024:1024,d:1024:1024:1024,s:4096:4096:4096,d:4096:4096:4096 --reps 21 --memory pinned | grep -E "^\| [sd] "
  for p in s d; do echo "== $(date -u +%H:%M:%S) plan_bench $p 1024,4096 21 auto (again)"; $B/plan_bench $p 1024,4096 21 auto; echo "rc=$?"; done
} > $P 2>&1
R=$OUT/resident.txt
{ for p in s d; do for mem in ordinary tandem_malloc; do
  echo "== $(date -u +%H:%M:%S) resident_bench $p 8192 1024 8192 8 7 auto $mem"; $B/resident_bench $p 8192 1024 8192 8 7 auto $mem; echo "rc=$?"
  done; done
  for p in s d; do for mem in pageable pinned; do
  echo "== $(date -u +%H:%M:%S) cublas_resident.py --precision $p --memory $mem"; python3 bench/cublas_resident.py --precision $p --memory $mem --reps 7; echo "rc=$?"
  done; done
} > $R 2>&1
