#!/usr/bin/env bash
# Runs tandem's tests and demo on the offline GPU host (../shared/gpu-host/README.md).
#
#   bash bench/gpu_host.sh pack        # here: build, then bundle programs and libraries into .gpu/
#   bash bench/gpu_host.sh run [OUT]   # there, from the repo root: unpack, run tests and demo
#   bash bench/gpu_host.sh tune [OUT]  # there: co-tune TANDEM_TUNE_PRECISION (s, d, c, z, both: the
#                                      # default, or all), export the profile
#   bash bench/gpu_host.sh compare [OUT]  # there: tandem compare, both precisions, 1024 to 8192
#   bash bench/gpu_host.sh sweep [OUT]    # there: the kernels of SWEEP_FILE (default
#                                         # bench/cases/kernels_h100_large_calls.txt; the case
#                                         # lists are in bench/cases/README.md), GPU alone at
#                                         # SWEEP_SIZES (4096), kernel rate and check;
#                                         # SWEEP_INSPECT=1 adds registers, spills and SASS
#                                         # instruction counts
#   bash bench/gpu_host.sh split [OUT]    # there: the lines of SPLIT_CASES (default
#                                         # bench/cases/split_h100_ordinary.txt: GPU alone
#                                         # at several CHUNK_FILLs, hybrid at several splits and
#                                         # CPU thread counts), one checked JSON line per call
#   bash bench/gpu_host.sh model [OUT]    # there: fit the cost model for the profile that applies
#                                         # (tandem tune --model-only), then bench/model_check's
#                                         # predictions against measurement (MODEL_SHAPES_S/_D)
#   bash bench/gpu_host.sh untuned [OUT]  # there: the GPU alone from tandem_malloc memory at
#                                         # UNTUNED_SIZES (8192 16384), both precisions, with the
#                                         # profile that applies before a local tune, then again
#                                         # after `tandem tune` (UNTUNED_TUNE_SECONDS); the profile
#   bash bench/gpu_host.sh calls [OUT]    # there: each line of CALLS_FILE is one checked
#                                         # `tandem gemm` (any of its options: devices, beta,
#                                         # feeders...), one JSON line per call; "@load N" starts
#                                         # N busy processes on cores 0..N-1, "@noload" stops them.
#                                         # CALLS_BEFORE=FILE.tar.xz (a bundle of the code before
#                                         # a change, packed as .gpu/bundle.tar.xz is): each line
#                                         # runs CALLS_ROUNDS times (2) with that bundle and with
#                                         # this one in turn, before first ("side" in the JSON)
#   bash bench/gpu_host.sh trust [OUT]    # there: issue 39's checks on the GPU: the entries from C
#                                         # (caller_frame), failed waits and finishes under every
#                                         # strategy (faults_calls), the route (ROUTE_TEST_N, 200:
#                                         # below the H100's route) and a whole program's cost
#                                         # (TRUST_N, 200, every call through tandem), a long-k call
#   bash bench/gpu_host.sh set-tune [OUT] # there, on a host with several GPUs of one kind: tune on
#                                         # one (SET_TUNE_DEVICE), export its profile, then auto
#                                         # over the set (SET_DEVICES) and "all" at SET_SIZE^3
set -euo pipefail
cd "$(dirname "$0")/.."
# The bundle's programs: one list, shared with bench/vs_clblast.sh (vs_clblast and clblast_batch
# need Debian's libclblast-dev where the bundle is made).
mapfile -t programs < <(grep -v '^#' bench/bundle_programs.txt)

unpack() {
  tar xJf .gpu/bundle.tar.xz -C /tmp
  # shellcheck disable=SC1091
  source /tmp/bundle/env.sh
  export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
  export PLPLOT_DRV_DIR=/tmp/bundle/plplot/drivers PLPLOT_LIB=/tmp/bundle/plplot
}

case "${1:-}" in
  pack)
    bash scripts/build.sh
    rm -rf .gpu/bundle .gpu/bundle.tar.xz && mkdir -p .gpu  # other bundles (CALLS_BEFORE) stay
    ../shared/gpu-host/bundle.sh .gpu/bundle "${programs[@]}"
    # tandem compare's plot: PLplot loads its SVG driver and reads its fonts and colour maps at run
    # time, from folders ldd does not list (the host has no PLplot); unpack() points PLplot here.
    drivers=$(pkg-config --variable=drvdir plplot)
    mkdir -p .gpu/bundle/plplot/drivers
    cp "$drivers"/svg.* .gpu/bundle/plplot/drivers/
    cp "/usr/share/$(basename "$(dirname "$drivers")")"/*.{pal,fnt} .gpu/bundle/plplot/
    tar -C .gpu -cJf .gpu/bundle.tar.xz bundle
    ;;
  run)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv | tee "$out/gpu.txt"
    status=0
    # Tests that assume a unified-memory device (PoCL) are left out on a discrete GPU.
    for t in gemm_test api_test; do
      "$t" --gtest_brief=1 > "$out/$t.log" 2>&1 || status=1
      tail -n 3 "$out/$t.log"
    done
    executor_test --gtest_brief=1 --gtest_filter='Executor.*-Executor.ZeroCopy*' > "$out/executor_test.log" 2>&1 || status=1
    tail -n 3 "$out/executor_test.log"
    for f in Fallback.NoMatchingDeviceFallsBackOnceWithOneWarning Fallback.BrokenKernelBuildIsAnErrorUnderGpu; do
      executor_test --gtest_brief=1 --gtest_filter="$f" >> "$out/executor_test.log" 2>&1 || status=1
    done
    tail -n 2 "$out/executor_test.log"
    tandem_demo --sizes "${TANDEM_DEMO_SIZES:-1024,2048,4096}" --reps 5 | tee "$out/demo.txt"
    exit $status
    ;;
  tune)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=/tmp/tandem-profiles
    tandem devices | tee "$out/devices.txt"
    # Warm-up: the host's memory grows on first use and its first minute is slow.
    tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null
    tandem gemm --precision d --m 4096 --n 4096 --k 4096 --strategy cpu --reps 3 > /dev/null
    # One log for every run in this profile directory; TANDEM_TUNE_SEED (a log from an earlier run,
    # say its kernel records only) starts it, so those measurements are not repeated.
    log="$TANDEM_PROFILE_DIR/tune-log.jsonl"
    mkdir -p "$TANDEM_PROFILE_DIR"
    if [ -n "${TANDEM_TUNE_SEED:-}" ] && [ ! -e "$log" ]; then cp "$TANDEM_TUNE_SEED" "$log"; fi
    tandem tune --precision "${TANDEM_TUNE_PRECISION:-both}" --budget-evals "${TANDEM_TUNE_EVALS:-40}" \
      --budget-seconds "${TANDEM_TUNE_SECONDS:-420}" --sizes "${TANDEM_TUNE_SIZES:-1024,2048,4096}" \
      --kernel-size "${TANDEM_TUNE_KERNEL_SIZE:-2048}" --top-kernels "${TANDEM_TUNE_TOP:-2}" --log "$log" \
      ${TANDEM_TUNE_START:+--start "$TANDEM_TUNE_START"} \
      ${TANDEM_TUNE_START_D:+--start-d "$TANDEM_TUNE_START_D"} 2> "$out/tune-progress.txt" | tee "$out/tune.txt"
    tandem profile export "$out/profile.json"
    cp "$log" "$out/tune-log.jsonl"
    case ${TANDEM_TUNE_PRECISION:-both} in both) tuned="s d" ;; all) tuned="s d c z" ;; *) tuned=$TANDEM_TUNE_PRECISION ;; esac
    for p in $tuned; do
      tandem gemm --precision $p --m 4096 --n 4096 --k 4096 --reps 5
      tandem gemm --precision $p --m 4096 --n 4096 --k 4096 --reps 5 --resident
      tandem gemm --precision $p --m 4096 --n 4096 --k 4096 --reps 5 --strategy gpu
      tandem gemm --precision $p --m 4096 --n 4096 --k 4096 --reps 5 --strategy cpu
    done | tee "$out/gemm.txt"
    ;;
  compare)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=/tmp/tandem-profiles  # empty: the built-in H100 profile applies
    nvidia-smi --query-gpu=name,driver_version,power.draw --format=csv | tee "$out/gpu.txt"
    # Warm-up: the host's memory grows on first use; touch as much as the largest size needs.
    tandem gemm --precision d --m 8192 --n 8192 --k 8192 --strategy gpu --reps 1 > /dev/null
    tandem gemm --precision d --m 8192 --n 8192 --k 4096 --strategy cpu --reps 2 > /dev/null
    tandem gemm --m 4096 --n 4096 --k 4096 --strategy hybrid --reps 3 > /dev/null
    # TANDEM_COMPARE_RESIDENT=1: operands in tandem_malloc memory (pinned on this GPU).
    tandem compare --precision both --sizes "${TANDEM_COMPARE_SIZES:-1024:8192:x2}" --reps 5 \
      ${TANDEM_COMPARE_RESIDENT:+--resident} \
      --out-csv "$out/compare.csv" --out-json "$out/compare.json" --out-plot "$out/compare.svg" | tee "$out/compare.txt"
    ;;
  sweep)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    # SWEEP_SIZES: the sizes (m = n = k); SWEEP_FILE: the candidates; SWEEP_RESIDENT=1: operands in
    # tandem_malloc memory; SWEEP_INSPECT=1: also each kernel's build (tandem kernel), its registers
    # and spills from ptxas, and its SASS instruction counts (cuobjdump), to inspect.txt.
    sizes=${SWEEP_SIZES:-${SWEEP_SIZE:-4096}}
    file=${SWEEP_FILE:-bench/cases/kernels_h100_large_calls.txt}
    memory=()
    [ "${SWEEP_RESIDENT:-0}" = 1 ] && memory=(--resident)
    tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null  # warm-up
    if [ "${SWEEP_INSPECT:-0}" = 1 ]; then
      ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1 || true)
      cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1 || true)
      i=0
      while read -r prec kernel; do
        case "$prec" in ''|'#'*) continue ;; esac
        i=$((i + 1))
        dir=$out/kernels/$i
        args=(kernel --precision "$prec" --out-dir "$dir")
        [ "$kernel" = "-" ] || args+=(--kernel "$kernel")
        {
          echo "== $i $prec $kernel"
          tandem "${args[@]}" | sed -n '2,3p' || echo "(the build failed: $dir/build.log)"
          grep -i "registers\|spill\|stack" "$dir/build.log" || true
          if [ -n "$ptxas" ] && [ -n "$cuobjdump" ] && [ -s "$dir/kernel.bin" ]; then
            tr -d '\000' < "$dir/kernel.bin" > "$dir/kernel.ptx"
            "$ptxas" -arch=sm_90 -v "$dir/kernel.ptx" -o "$dir/kernel.cubin" 2>&1 | grep -i "gemm\|registers\|spill" || true
            "$cuobjdump" -sass "$dir/kernel.cubin" > "$dir/kernel.sass" 2>&1 || true
            # Opcode counts of the gemm function (the transpose kernel comes first or after it).
            awk '/Function : gemm/{f=1} /Function : transpose/{f=0} f' "$dir/kernel.sass" |
              grep -oE '^ +/\*[0-9a-f]{4}\*/ +[A-Z][A-Z0-9._]*' | awk '{print $2}' | sort | uniq -c | sort -rn |
              head -25 | tr '\n' ' ' || true
            echo
          fi
        } >> "$out/inspect.txt" 2>&1
      done < "$file"
      (cd "$out" && tar cJf kernels.tar.xz kernels && rm -rf kernels)
      cat "$out/inspect.txt"
    fi
    for size in $sizes; do
      while read -r prec kernel; do
        case "$prec" in ''|'#'*) continue ;; esac
        args=(gemm --precision "$prec" --m "$size" --n "$size" --k "$size" --strategy gpu --reps "${SWEEP_REPS:-5}"
              --json "${memory[@]}")
        [ "$kernel" = "-" ] || args+=(--kernel "$kernel")
        if r=$(tandem "${args[@]}" 2>>"$out/sweep-stderr.txt"); then
          python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print("%s %s %8.0f kernel %8.0f call  ok=%s fell_back=%s  %s" % (sys.argv[2], sys.argv[3], j["kernel_gflops"], j["gflops"], j["ok"], j["fell_back"], j["kernel"]))' "$r" "$prec" "$size"
        else
          echo "$prec $size FAILED $kernel: $(tail -c 300 "$out/sweep-stderr.txt")"
        fi
      done < "$file" | tee "$out/sweep-$size.txt"
    done
    ;;
  split)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 3 > /dev/null  # warm-up
    # Each line: precision size strategy[:r] fraction threads kernel ("-" leaves one out).
    while read -r prec size strategy fraction threads kernel; do
      case "$prec" in ''|'#'*) continue ;; esac
      # A strategy ending in ":r" runs on tandem_malloc memory (--resident).
      memory=()
      case "$strategy" in *:r) memory=(--resident); strategy=${strategy%:r} ;; esac
      args=(--json gemm --precision "$prec" --m "$size" --n "$size" --k "$size" --strategy "$strategy"
            --reps "${SPLIT_REPS:-5}" "${memory[@]}")
      [ "$fraction" = "-" ] || args+=(--fraction "$fraction")
      [ "$threads" = "-" ] || args+=(--threads "$threads")
      [ "$kernel" = "-" ] || args+=(--kernel "$kernel")
      if r=$(tandem "${args[@]}" 2>>"$out/split-stderr.txt"); then
        # One JSON line per call (with its case) to split.jsonl, one summary line to the output.
        python3 -c '
import json, sys
j = json.loads(sys.argv[1]); j["case"] = sys.argv[2]
with open(sys.argv[3], "a") as f: f.write(json.dumps(j, sort_keys=True) + "\n")
print("%-32s %8.0f GFLOPS  kernel %8.0f  cpu %.4fs gpu %.4fs rows %d/%d ok=%s %s" % (sys.argv[2], j["gflops"],
      j["kernel_gflops"], j["cpu_share_seconds"], j["gpu_done_seconds"], j["gpu_rows"], j["cpu_rows"], j["ok"],
      "FELL BACK" if j["fell_back"] else ""))' "$r" "$prec $size $strategy${memory:+:r} $fraction $threads" "$out/split.jsonl"
      else
        echo "$prec $size $strategy FAILED: $(tail -c 300 "$out/split-stderr.txt")"
      fi
    done < "${SPLIT_CASES:-bench/cases/split_h100_ordinary.txt}" | tee "$out/split.txt"
    ;;
  calls)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=${TANDEM_PROFILE_DIR:-/tmp/tandem-profiles}
    tandem devices | tee "$out/devices.txt"
    sides=(now) rounds=1
    if [ -n "${CALLS_BEFORE:-}" ]; then
      rm -rf /tmp/before && mkdir -p /tmp/before-unpack
      tar xJf "$CALLS_BEFORE" -C /tmp/before-unpack && mv /tmp/before-unpack/* /tmp/before
      sides=(before now) rounds=${CALLS_ROUNDS:-2}
    fi
    # A competing CPU-bound load: one busy shell per core, pinned where taskset is there.
    load=()
    stop_load() { [ ${#load[@]} -eq 0 ] || kill "${load[@]}" 2> /dev/null || true; load=(); }
    trap stop_load EXIT
    # Each line of CALLS_FILE: the arguments of one checked `tandem gemm` (CALLS_REPS repetitions
    # after a warm-up, 5 by default); one JSON line per call (with its arguments and the load) to
    # calls.jsonl.
    while read -r line; do
      case "$line" in ''|'#'*) continue ;; esac
      case "$line" in
        '@load '*)
          stop_load
          for ((i = 0; i < ${line#@load }; i++)); do
            if command -v taskset > /dev/null; then taskset -c "$i" sh -c 'while :; do :; done' &
            else sh -c 'while :; do :; done' & fi
            load+=($!)
          done
          echo "== competing load: ${#load[@]} busy processes"; sleep 1; continue ;;
        '@noload') stop_load; echo "== no competing load"; continue ;;
      esac
      for ((round = 0; round < rounds; round++)); do
        for side in "${sides[@]}"; do
          cli=tandem
          [ "$side" = before ] && cli=/tmp/before/bin/tandem
          # shellcheck disable=SC2086
          if r=$(LD_LIBRARY_PATH=$([ "$side" = before ] && echo /tmp/before/lib:)$LD_LIBRARY_PATH \
                 "$cli" --json gemm $line --reps "${CALLS_REPS:-5}" 2>>"$out/calls-stderr.txt"); then
            python3 -c '
import json, sys
j = json.loads(sys.argv[1]); j["args"] = sys.argv[2]; j["load"] = int(sys.argv[4]); j["side"] = sys.argv[5]
with open(sys.argv[3], "a") as f: f.write(json.dumps(j, sort_keys=True) + "\n")
parts = " ".join("d%d:%d/%d" % (d["index"], d["rows"], d.get("chunks", 1)) for d in j["devices"])
print("%-70s %-6s %9.0f GFLOPS  rows/chunks %s cpu:%d/%d  thr %d feed %d  load %d  ok=%s%s" % (sys.argv[2],
      sys.argv[5], j["gflops"], parts, j["cpu_rows"], j.get("cpu_chunks", 0), j["cpu_threads"],
      j["feeder_threads"], j["load"], j["ok"], "  FELL BACK" if j["fell_back"] else ""))
' "$r" "$line" "$out/calls.jsonl" "${#load[@]}" "$side"
          else
            echo "$line ($side) FAILED: $(tail -c 300 "$out/calls-stderr.txt")"
          fi
        done
      done
    done < "${CALLS_FILE:-bench/cases/calls_h100_feeder_cores.txt}" | tee "$out/calls.txt"
    ;;
  model)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=${TANDEM_PROFILE_DIR:-/tmp/tandem-profiles}
    dev=${MODEL_DEVICE:-1}
    tandem devices > "$out/devices.txt"
    # Warm-up: the host's memory grows on first use and its first minute is slow.
    tandem gemm --m 8192 --n 8192 --k 8192 --strategy gpu --reps 2 --device "$dev" > /dev/null
    tandem gemm --precision d --m 4096 --n 4096 --k 4096 --strategy cpu --reps 3 > /dev/null
    # The cost model for the profile that applies (the built-in one, unless MODEL_PROFILE names a
    # file to import first), then its predictions against measurement, in each MODEL_MEMORY
    # (ordinary, pinned; c-pinned: C alone in tandem_malloc memory; ab-pinned: A and B).
    # MODEL_KERNELS=1 adds the GPU alone with each of the bucket's two kernels (model_check --kernels).
    [ -z "${MODEL_PROFILE:-}" ] || tandem profile import "$MODEL_PROFILE" --device "$dev"
    tandem tune --model-only --device "$dev" 2> "$out/model-progress.txt" | tee "$out/model-tune.txt"
    tandem profile export "$out/profile-model.json" --device "$dev"
    s_shapes=${MODEL_SHAPES_S:-4096x4096x4096,8192x8192x8192,4097x4097x4097,8192x8192x256,256x8192x8192,100x8192x8192,16384x16384x256:1,8192x8192x512:1,8128x8128x64:1}
    d_shapes=${MODEL_SHAPES_D:-4096x4096x4096,4097x4097x4097,16384x16384x256:1,8128x8128x64:1,4160x64x3968}
    for p in s d; do
      shapes=$s_shapes; [ $p = d ] && shapes=$d_shapes
      model_check --precision $p --device "$dev" --shapes "$shapes" \
        --memory "${MODEL_MEMORY:-ordinary,pinned}" \
        --reps "${MODEL_REPS:-5}" ${MODEL_FRACTIONS:+--fractions "$MODEL_FRACTIONS"} \
        ${MODEL_KERNELS:+--kernels} \
        > "$out/model-check-$p.jsonl" 2> "$out/model-check-$p.txt" || echo "model_check $p failed"
      cat "$out/model-check-$p.txt"
    done
    ;;
  untuned)
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=${TANDEM_PROFILE_DIR:-/tmp/tandem-profiles}
    dev=${UNTUNED_DEVICE:-nvidia}
    tandem devices | tee "$out/devices.txt"
    tandem gemm --m 8192 --n 8192 --k 8192 --strategy gpu --reps 2 --device "$dev" > /dev/null
    # The GPU alone from tandem_malloc memory with the profile that applies before any local tune
    # (the built-in database's nearest entry), then after `tandem tune`, in one process each.
    measure() {
      for p in s d; do
        for n in ${UNTUNED_SIZES:-8192 16384}; do
          printf '%s %s %s ' "$1" "$p" "$n"
          tandem --json gemm --precision $p --m "$n" --n "$n" --k "$n" --strategy gpu --resident \
            --reps "${UNTUNED_REPS:-5}" --device "$dev" | tr -d '\n'
          echo
        done
      done
    }
    measure before | tee "$out/untuned.jsonl"
    tandem tune --device "$dev" --no-model --budget-seconds "${UNTUNED_TUNE_SECONDS:-900}" \
      2> "$out/tune-progress.txt" | tee "$out/tune.txt"
    tandem profile export "$out/profile.json" --device "$dev"
    measure after | tee -a "$out/untuned.jsonl"
    ;;
  trust)
    # Issue 39 on the GPU host: every entry called as C programs call them, plain and preloaded,
    # with products on the GPU (forced hybrid); OpenCL's waits and finishes failing under every
    # strategy through the C API, C++ and the drop-in, the GPU being the first GPU auto takes; the
    # route; what a program whose calls stay on the CPU pays, whole; a few rows over a long k.
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=${TANDEM_PROFILE_DIR:-/tmp/tandem-profiles}
    mkdir -p "$TANDEM_PROFILE_DIR"
    lib=/tmp/bundle/lib/libtandem_blas.so.0
    status=0
    tandem devices > "$out/devices.txt" 2>&1
    # Warm-up: the host's memory grows on first use and its first minute is slow.
    tandem gemm --m 4096 --n 4096 --k 4096 --strategy gpu --reps 2 > /dev/null
    bash tests/caller_frame_test.sh "$(command -v caller_frame_test)" "$lib" > "$out/caller_frame.txt" 2>&1 || status=1
    tail -n 2 "$out/caller_frame.txt"
    bash tests/faults_calls_test.sh "$(command -v faults_calls)" /tmp/bundle/bin/libcl_faults.so \
      > "$out/faults_calls.txt" 2>&1 || status=1
    tail -n 2 "$out/faults_calls.txt"
    ROUTE_TEST_N=${ROUTE_TEST_N:-200} bash tests/route_test.sh "$(command -v route_calls)" > "$out/route.txt" 2>&1 || status=1
    tail -n 3 "$out/route.txt"
    python3 bench/process_cost.py "$(command -v one_call)" "$lib" "${TRUST_N:-200}" "${TRUST_REPS:-21}" \
      TANDEM_MIN_MNK=0 | tee "$out/process_cost.txt"
    for s in hybrid auto gpu; do
      echo "m=n=2 k=2^22 $s: $(tandem --json gemm --m 2 --n 2 --k 4194304 --strategy $s | tr -d '\n')"
    done | tee "$out/long_k.txt"
    exit $status
    ;;
  set-tune)
    # A host with several GPUs of one kind (the two-H200 host): `tandem tune` on the first
    # (SET_TUNE_DEVICE, default 1; its profile applies to every GPU of that name), sizes that follow
    # the device, the cost model included, SET_TUNE_SECONDS (260) of budget; the profile exported
    # for the built-in database; then checked calls under it (SET_DEVICES, default 1,2): one GPU,
    # the set, auto with no device named, and every GPU with the CPU ("all"), under auto, both
    # precisions at SET_SIZE^3 (16384), then one GPU against auto's own set at SET_MID's sizes.
    out=${2:-${OUT:-/tmp/tandem-out}}
    mkdir -p "$out"
    unpack
    export TANDEM_PROFILE_DIR=${TANDEM_PROFILE_DIR:-/tmp/tandem-profiles}
    dev=${SET_TUNE_DEVICE:-1} set=${SET_DEVICES:-1,2} n=${SET_SIZE:-16384}
    tandem devices > "$out/devices.txt"
    # Warm-up: the host's memory grows on first use and its first minute is slow.
    tandem gemm --m 8192 --n 8192 --k 8192 --strategy gpu --device "$set" --reps 2 > /dev/null
    tandem gemm --precision d --m 4096 --n 4096 --k 4096 --strategy cpu --reps 2 > /dev/null
    tandem tune --device "$dev" --budget-seconds "${SET_TUNE_SECONDS:-260}" --log "$out/tune-log.jsonl" \
      2> "$out/tune-progress.txt" | tee "$out/tune.txt"
    tandem profile export "$out/profile.json" --device "$dev"
    # "auto": no device named, so auto weighs every GPU by the models the tune fitted.
    for p in s d; do
      for args in "--strategy gpu --device $dev" "--device $set" "auto" "--device all" \
                  "--device $set --resident" "--resident"; do
        [[ $args == auto ]] && args=""
        # shellcheck disable=SC2086
        echo "$p $n ${args:-auto} $(tandem --json gemm --precision $p --m "$n" --n "$n" --k "$n" \
          $args --reps "${SET_REPS:-3}" | tr -d '\n')" | tee -a "$out/set.jsonl"
      done
    done
    # The mid sizes: does auto's own set lose to one GPU where a second one pays little?
    for m in ${SET_MID:-2048 4096 8192}; do
      for p in s d; do
        for args in "--device $dev" "auto"; do
          [[ $args == auto ]] && args=""
          # shellcheck disable=SC2086
          echo "$p $m ${args:-auto} $(tandem --json gemm --precision $p --m "$m" --n "$m" \
            --k "$m" $args --reps "${SET_REPS:-3}" | tr -d '\n')" | tee -a "$out/set.jsonl"
        done
      done
    done
    ;;
  *)
    echo "usage: $0 pack | run [OUT] | tune [OUT] | compare [OUT] | sweep [OUT] | split [OUT] | calls [OUT] | model [OUT] | untuned [OUT] | trust [OUT] | set-tune [OUT]" >&2
    exit 2
    ;;
esac
