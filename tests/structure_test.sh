#!/usr/bin/env bash
# The code's structure rules, checked on every run of the suite:
#  - no source file in src/, tuner/, cli/ or power/ over 600 lines, unless it says why ("Longer than
#    600 lines because ...");
#  - no function there over 80 lines (clang-tidy's readability-function-size), unless it is marked
#    NOLINT(readability-function-size) with its reason;
#  - each dependency is included by its one file: OpenCL by src/gpu/cl.hpp, OpenBLAS's cblas.h by
#    src/cpu/blas.cpp and the drop-in's entries in src/blas3/dropin/ (for the signatures they
#    export, declared once in src/blas3/dropin/blas_entries.hpp),
#    hwloc by src/cpu/topology.cpp, oneTBB by src/cpu/tasks.cpp, PLplot by cli/plot.cpp,
#    libpowercap by power/rapl_powercap.cpp;
#  - src/ is built in layers, one folder each, and no include runs up a layer (the table `layers`
#    below, lowest first); every include in src/ names its folder; tuner/ sits above src/ and
#    power/, cli/ above tuner/, and src/ includes neither;
#  - the seams are set only from outside the library (tests/support/seam_override.cpp): no library
#    file calls seams::store but src/base/seams.cpp, which keeps them;
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

sources=$(find src tuner cli power -name '*.cpp' -o -name '*.hpp' | sort)
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
  hits=$(grep -rlE "^#include <($pattern)" src include tuner cli power | sort)
  for f in $hits; do
    local ok=0
    for allowed in "$@"; do [ "$f" = "$allowed" ] && ok=1; done
    [ $ok -eq 1 ] || fail "$f includes <$pattern...>; only $* may"
  done
}
confined 'CL/' src/gpu/cl.hpp
confined 'cblas\.h|openblas' src/cpu/blas.cpp src/blas3/dropin/blas_entries.hpp \
  src/blas3/dropin/gemm_entries.cpp src/blas3/dropin/level3_entries.cpp
confined 'hwloc' src/cpu/topology.cpp
confined 'oneapi/tbb|tbb/' src/cpu/tasks.cpp
confined 'plplot' cli/plot.cpp
confined 'powercap/' power/rapl_powercap.cpp

# The seams are set from outside the library (tests/support/seam_override.cpp): no library file
# stores them but the one that keeps them.
for f in $(grep -rlE 'seams::(store|current)\(' src include | sort); do
  fail "$f sets the seams"
done

# The layers of src/, lowest first: a file may include its own folder's headers and those of the
# folders before it, never one after it. Headers generated at build time and the public headers
# (tandem/) stand below every layer.
layers=(base cpu model profile gpu plan run api blas3)
rank() {
  local i
  for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo -1
}
for dir in src/*/; do
  dir=${dir%/}
  [ "$(rank "${dir#src/}")" -ge 0 ] ||
    fail "$dir is no layer of the table in tests/structure_test.sh"
done
for f in $(find src -name '*.cpp' -o -name '*.hpp' -o -name '*.S' | sort); do
  [ "$(dirname "$f")" = src ] && fail "$f lies in src/ itself, in no layer"
  own=$(echo "$f" | cut -d/ -f2)
  own_rank=$(rank "$own")
  while read -r included; do
    case $included in
      tandem/* | tandem_kernels.hpp | tandem_builtin_profiles.hpp) continue ;;
    esac
    folder=${included%%/*}
    if [ "$folder" = "$included" ]; then
      fail "$f includes \"$included\" without its folder"
      continue
    fi
    r=$(rank "$folder")
    if [ "$r" -lt 0 ]; then
      fail "$f includes \"$included\", which is in no layer of src/"
    elif [ "$r" -gt "$own_rank" ]; then
      fail "$f ($own) includes \"$included\" from the layer above it ($folder)"
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done

# tuner/ and power/ never include the command (cli/); src/ includes neither (checked above: every
# include in src/ names a layer).
for f in $(grep -rlE '^#include "(cli|compare|plot)\.hpp"' tuner power | sort); do
  fail "$f includes the tandem command's headers"
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
  long=$(find src tuner cli power -name '*.cpp' | sort |
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
