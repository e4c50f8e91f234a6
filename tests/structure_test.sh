#!/usr/bin/env bash
# The code's structure rules, checked on every run of the suite:
#  - no source file in src/, tuner/ or power/ over 600 lines, unless it says why ("Longer than
#    600 lines because ...");
#  - no function there over 80 lines (clang-tidy's readability-function-size), unless it is marked
#    NOLINT(readability-function-size) with its reason;
#  - each dependency is included by its one file: OpenCL by src/gpu/cl.hpp, OpenBLAS's cblas.h by
#    src/cpu_blas.cpp and the drop-in's entries in src/dropin/ (for the signatures they export,
#    declared once in src/dropin/blas_entries.hpp),
#    hwloc by src/topology.cpp, oneTBB by src/tasks.cpp, PLplot by tuner/plot.cpp, libpowercap by
#    power/rapl_powercap.cpp;
#  - the test-only seam setter (src/testing/seam_override.hpp) is included by no library file but
#    src/seams.cpp, which defines it;
#  - every file in src/ opens with a comment saying what it is for.
# Usage: structure_test.sh SOURCE_DIR BUILD_DIR (BUILD_DIR holds compile_commands.json).
set -uo pipefail
root=$1
build=$2
cd "$root"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

sources=$(find src tuner power -name '*.cpp' -o -name '*.hpp' | sort)
[ -n "$sources" ] || fail "no sources found under $root"

for f in $sources; do
  lines=$(wc -l <"$f")
  if [ "$lines" -gt 600 ] && ! grep -q '^// Longer than 600 lines because' "$f"; then
    fail "$f has $lines lines (at most 600, or say why)"
  fi
done

# Which files may include a dependency's headers: pattern, then the allowed files.
confined() {
  local pattern=$1
  shift
  local hits
  hits=$(grep -rlE "^#include <($pattern)" src include tuner power | sort)
  for f in $hits; do
    local ok=0
    for allowed in "$@"; do [ "$f" = "$allowed" ] && ok=1; done
    [ $ok -eq 1 ] || fail "$f includes <$pattern...>; only $* may"
  done
}
confined 'CL/' src/gpu/cl.hpp
confined 'cblas\.h|openblas' src/cpu_blas.cpp src/dropin/blas_entries.hpp \
  src/dropin/gemm_entries.cpp src/dropin/level3_entries.cpp
confined 'hwloc' src/topology.cpp
confined 'oneapi/tbb|tbb/' src/tasks.cpp
confined 'plplot' tuner/plot.cpp
confined 'powercap/' power/rapl_powercap.cpp

for f in $(grep -rlE '^#include "testing/seam_override.hpp"' src include tuner power | sort); do
  [ "$f" = src/seams.cpp ] || fail "$f includes the test-only seam setter"
done

for f in $(find src -name '*.cpp' -o -name '*.hpp' | sort); do
  head -n 1 "$f" | grep -q '^// ' || fail "$f does not open with a comment saying what it is for"
done

if ! command -v clang-tidy >/dev/null; then
  fail "clang-tidy is not installed (scripts/setup.sh installs it)"
elif [ ! -f "$build/compile_commands.json" ]; then
  fail "$build/compile_commands.json is missing (CMAKE_EXPORT_COMPILE_COMMANDS)"
else
  config="{Checks: '-*,readability-function-size', CheckOptions: [{key: readability-function-size.LineThreshold, value: 80}]}"
  long=$(find src tuner power -name '*.cpp' | sort |
    xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet --config="$config" 2>/dev/null |
    grep -A1 'readability-function-size' | grep -E 'warning|note' || true)
  [ -z "$long" ] || fail "functions over 80 lines:
$long"
fi

if [ $failures -gt 0 ]; then
  echo "$failures structure rule(s) broken"
  exit 1
fi
echo "structure: $(echo "$sources" | wc -w) files checked, every rule holds"
