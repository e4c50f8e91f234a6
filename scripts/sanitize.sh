#!/usr/bin/env bash
# CI's sanitizer and fuzz jobs (issue 16). scripts/test.sh runs all three after the suite; each
# runs alone too:
#
#   bash scripts/sanitize.sh address   # the library's suites under ASan+UBSan (./build-asan)
#   bash scripts/sanitize.sh thread    # the library's suites under TSan (./build-tsan)
#   bash scripts/sanitize.sh fuzz      # the fuzz targets, TANDEM_FUZZ_SECONDS (60) each (./build-asan)
#
# Each builds, with clang and cmake/sanitize.cmake's options, the library and only what the job
# runs, in a tree of its own (./build's Release objects stay as they are); address and fuzz share
# one, so one build of the library serves both. The suites are those tests/CMakeLists.txt labels
# `sanitize` (tandem_sanitized_suite: each executable as one process, a sample of gemm_test's
# cases), run by ctest with their environment. A report fails its test: recovery is off and
# halt_on_error set, so the first one ends the process. Only TSan needs suppressions
# (tests/sanitizers/): they name only third-party libraries, each with the reason.
#
# Budget: CI (.ci/run, scripts/test.sh on a clean 2-core Debian 12) must finish in 45 minutes.
# Measured on this project's 2-core machine on 2026-11-23 while another build and suite ran on
# it (load 3.5 to 5.5, so about twice an idle machine's times):
#   address  build 7.3 min from clean (the library, 17 suites, 3 fuzz targets; now 18 and 4),
#            suites 1.7 min
#            (gemm_test's sample the longest, 100 s; the whole of gemm_test took 6.4 min)
#   thread   build 4.8 min from clean, suites 1.3 min
#   fuzz     3 targets x 60 s, two at a time: 2.2 min (the build is address's); a fourth
#            (batch_fuzz, 2026-11-26) makes it two rounds of two, about 2.2 min still
#   oclgrind (a test of the suite, not a job here) 7.4 min for 48 kernel variants
# The three jobs: about 17 minutes here, so 9 to 10 on an idle machine, beside the Release build
# (8.3 minutes here from clean) and the suite (about 16 minutes idle): about 31 minutes in all. Cut first, if CI grows: TANDEM_FUZZ_SECONDS, then
# gemm_test's sample (tests/CMakeLists.txt), then TANDEM_OCLGRIND_KERNELS (tests/oclgrind.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
job=${1:-}
supp=$PWD/tests/sanitizers

case $job in
  address | fuzz)
    tree=build-asan
    flags=(-DTANDEM_SANITIZE=address,undefined -DTANDEM_FUZZ=ON
      "-DTANDEM_FUZZ_SECONDS=${TANDEM_FUZZ_SECONDS:-60}")
    # use_sigaltstack=0: LLVM inside PoCL replaces a thread's alternate signal stack with one of
    # its own from malloc when it compiles a kernel there, and ASan, unmapping what it takes for
    # its own at the thread's end, then stops the process ("unable to unmap").
    # No suppressions: nothing in these runs needs one. (LeakSanitizer must not be told to
    # ignore PoCL: a cl_mem that tandem never releases is allocated inside PoCL too.)
    # intercept_tls_get_addr=0: clang 14's runtime (fixed in LLVM 17) takes a dynamic TLS block
    # whose start lies 16 bytes into a page for one with glibc 2.19's header, and reads the two
    # words before it as the block's range; LeakSanitizer's tracer then scans that range and dies
    # ("Tracer caught signal 11") after the test has passed. Where the blocks land depends on the
    # allocations before them, so one environment fails every time and another never:
    # sanitize.dropin.zero_threshold did under ctest (LSAN_OPTIONS=verbosity=1 showed
    # "DTLS 9 at 0x000000000a37-0x000800001b39"), 2026-11-29. Without the interceptor the
    # dynamic TLS of dlopen'd libraries is not scanned for pointers; no suite reports a leak.
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:use_sigaltstack=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:intercept_tls_get_addr=0"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    ;;
  thread)
    tree=build-tsan
    flags=(-DTANDEM_SANITIZE=thread)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    ;;
  *)
    echo "usage: scripts/sanitize.sh address|thread|fuzz" >&2
    exit 2
    ;;
esac
targets=sanitized_suites
label=sanitize
if [ "$job" = fuzz ]; then
  targets="params_fuzz env_fuzz profile_fuzz batch_fuzz"
  label=fuzz
fi

bash scripts/setup.sh >/dev/null
# -O1 and line tables only: all the sanitizers' reports need (the address build took 7 minutes
# here, against 11 at -O2 -g).
cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DTANDEM_BUILD_BENCH=OFF \
  "${flags[@]}" >/dev/null
# clang 14's TSan runtime cannot place its shadow memory where the kernel randomises mmap with
# more bits than it expects (vm.mmap_rnd_bits above 28 on some kernels): every instrumented
# program, the build's test discovery included, then dies with "unexpected memory mapping". A
# trivial program shows it first; then the build and the suites run with address randomisation
# off for their processes (setarch -R), the layout TSan was built for.
runner=()
if [ "$job" = thread ]; then
  echo 'int main(void) { return 0; }' | clang -fsanitize=thread -x c - -o "$tree/tsan-probe"
  if ! "$tree/tsan-probe" >"$tree/tsan-probe.log" 2>&1; then
    cat "$tree/tsan-probe.log"
    if grep -q "unexpected memory mapping" "$tree/tsan-probe.log" &&
       setarch "$(uname -m)" -R "$tree/tsan-probe"; then
      echo "thread: TSan runs here only without address randomisation: setarch -R"
      runner=(setarch "$(uname -m)" -R)
    else
      echo "FAILED: thread: a program built with -fsanitize=thread does not run here"
      exit 1
    fi
  fi
fi
start=$SECONDS
# shellcheck disable=SC2086  # targets is a list of names
if ! "${runner[@]}" cmake --build "$tree" -j "$(nproc)" --target $targets >"$tree/build.log" 2>&1; then
  tail -n 40 "$tree/build.log"
  echo "FAILED: $job: the build ($tree/build.log has all of it)"
  exit 1
fi
echo "$job: built $targets in $tree ($((SECONDS - start)) s)"
# PoCL's compiler keeps about 10 KB each time it builds a work-group function (LLVM's objects,
# allocated from inside libpocl), which LeakSanitizer reports; it builds none for a kernel its
# disk cache holds. So the batch suite's kernels go into the cache first, from the Release build
# scripts/test.sh has made, under the suite's devices (tests/CMakeLists.txt, batch_test): left to
# the Release suite's order, a CI run on a fresh machine found them cold (2026-11-26).
if [ "$job" = address ] && [ -x build/tests/batch_test ]; then
  POCL_DEVICES="basic pthread" build/tests/batch_test >"$tree/pocl-cache-warm.log" 2>&1 ||
    echo "address: warming PoCL's cache: build/tests/batch_test failed ($tree/pocl-cache-warm.log)"
fi
cd "$tree"
"${runner[@]}" ctest -L "^$label\$" -j "$(nproc)" --timeout 900 --output-on-failure
