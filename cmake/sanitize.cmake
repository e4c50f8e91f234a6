# Sanitizer and fuzzing builds (issue 16): scripts/sanitize.sh configures them in build trees of
# their own (build-asan for ASan+UBSan and the fuzz targets, build-tsan), never in ./build, whose
# Release objects the README's test command and the benchmarks use.
#
# TANDEM_SANITIZE is the list -fsanitize takes ("address,undefined" or "thread"). Every target is
# built with it, so the library, the tuner and the tests are all instrumented; the third-party
# libraries they load (OpenBLAS, oneTBB, hwloc, PoCL and the LLVM inside it) are Debian's and are
# not, which is what tests/sanitizers/*.supp accounts for. Recovery is off, so the first report
# ends the process with a failure, whatever the test itself would have said.
#
# TANDEM_FUZZ builds the libFuzzer targets of tests/fuzz (clang only): the library gets
# -fsanitize=fuzzer-no-link, the coverage libFuzzer steers by, and each target links libFuzzer.
set(TANDEM_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined or thread")
option(TANDEM_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)

if(TANDEM_SANITIZE)
  if(TANDEM_SANITIZE MATCHES "thread" AND TANDEM_SANITIZE MATCHES "address")
    message(FATAL_ERROR "TANDEM_SANITIZE: thread cannot be combined with address")
  endif()
  add_compile_options(-fsanitize=${TANDEM_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${TANDEM_SANITIZE})
  if(TANDEM_SANITIZE MATCHES "thread")
    # oneTBB's inline code stays uninstrumented like its library, and src/cpu/tasks.cpp tells TSan
    # the orders oneTBB guarantees (TANDEM_TSAN).
    add_compile_options(
      -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/../tests/sanitizers/tsan_ignorelist.txt)
    add_compile_definitions(TANDEM_TSAN=1)
  endif()
endif()

if(TANDEM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TANDEM_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
