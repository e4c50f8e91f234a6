#!/usr/bin/env bash
# The drop-in against NVIDIA's NVBLAS and OpenBLAS on the GPU host, as a program sees them:
# bench/fortran_gemm (GEMM through the Fortran BLAS on malloc'd memory, every result checked) in
# three processes in turn, OpenBLAS alone, LD_PRELOAD of libtandem_blas.so, and LD_PRELOAD of the
# CUDA toolkit's libnvblas.so with its default tile and OpenBLAS as its CPU BLAS, for DROPIN_ROUNDS
# rounds (2; the order turns each round). Writes OUT/dropin.jsonl (one line per case and process,
# "label" names the process and round) and OUT/dropin.md (GFLOPS of the median call over every
# round's timed calls, and the ratios).
#
#   here:  bash bench/vs_clblast.sh pack    (its bundle carries fortran_gemm)
#   there: bash bench/dropin_host.sh OUT [CASES] [REPS]
#          CASES as fortran_gemm takes them (default below), REPS per process (5).
# The GPU is taken by name (TANDEM_DEVICE=nvidia); TANDEM_PROFILE_DIR passes through, so a profile
# tuned there first (bench/gpu_host.sh tune) is the one the drop-in plans by.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$1
cases=${2:-c:4096:4096:4096,c:8192:8192:8192,z:4096:4096:4096,z:8192:8192:8192,d:4096:4096:4096,d:8192:8192:8192,s:8192:8192:8192}
reps=${3:-5}
mkdir -p "$out"
[ -d /tmp/bundle ] || tar xJf .gpu/bundle.tar.xz -C /tmp
# shellcheck disable=SC1091
source /tmp/bundle/env.sh
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX} TANDEM_DEVICE=${TANDEM_DEVICE:-nvidia}
nvblas=$(find / -name 'libnvblas.so*' -type f 2>/dev/null | head -1)
openblas=$(ls /tmp/bundle/lib/libopenblas*.so* 2>/dev/null | head -1)
cat > "$out/nvblas.conf" <<EOF
NVBLAS_LOGFILE $out/nvblas.log
NVBLAS_CPU_BLAS_LIB $openblas
NVBLAS_GPU_LIST ALL
EOF
{ date -u; nproc; echo "nvblas: $nvblas"; echo "openblas: $openblas"; tandem devices; } > "$out/host.txt" 2>&1
# Warm-up: the host's memory grows on first use.
fortran_gemm "${DROPIN_WARMUP:-d:8192:8192:8192}" 1 warmup > /dev/null 2>&1
run() {  # label round
  case $1 in
    openblas) fortran_gemm "$cases" "$reps" "openblas-r$2" ;;
    tandem) LD_PRELOAD=/tmp/bundle/lib/libtandem_blas.so.0 fortran_gemm "$cases" "$reps" "tandem-r$2" ;;
    nvblas) NVBLAS_CONFIG_FILE=$out/nvblas.conf LD_PRELOAD=$nvblas fortran_gemm "$cases" "$reps" "nvblas-r$2" ;;
  esac
}
status=0
for round in $(seq 1 "${DROPIN_ROUNDS:-2}"); do
  order=(openblas tandem nvblas)
  [ $((round % 2)) = 0 ] && order=(nvblas tandem openblas)
  for who in "${order[@]}"; do
    run "$who" "$round" >> "$out/dropin.jsonl" 2>> "$out/dropin.err" || status=1
  done
done
python3 - "$out/dropin.jsonl" > "$out/dropin.md" <<'EOF'
import json, statistics, sys
rows = {}
bad = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    who = r["label"].split("-r")[0]
    key = (r["routine"], r["m"], r["n"], r["k"], r["beta"])
    rows.setdefault(key, {}).setdefault(who, []).extend(r["seconds"])
    if r["check"] != "ok":
        bad.append(f'{r["label"]} {key}: {r["check"]}')
print("| call | OpenBLAS | tandem drop-in | NVBLAS | tandem / NVBLAS | tandem / OpenBLAS |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for (routine, m, n, k, beta), w in rows.items():
    flops = (8 if routine[0] in "cz" else 2) * m * n * k
    g = {who: flops / statistics.median(v) * 1e-9 for who, v in w.items()}
    o, t, nv = g.get("openblas", 0), g.get("tandem", 0), g.get("nvblas", 0)
    shape = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
    print(f"| {routine[:-1]} {shape}{', beta 1' if beta else ''} | {o:,.0f} | {t:,.0f} | {nv:,.0f} | "
          f"{t / nv if nv else 0:.2f} | {t / o if o else 0:.1f} |")
print()
print("every result checked: " + ("all passed" if not bad else "FAILED:\n" + "\n".join(bad)))
EOF
cat "$out/dropin.md"
exit $status
