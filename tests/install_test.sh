#!/usr/bin/env bash
# The installed tree works for a user outside tandem's source: `cmake --install` into a temporary
# prefix, then the outside project (tests/outside_project: a C and a C++ program on the API, a C
# program on the drop-in BLAS) is built and run through find_package(tandem) and through
# pkg-config, and the installed `tandem` command starts with no LD_LIBRARY_PATH. The libraries
# are in the multiarch directory (lib/<triplet>) where the compiler has one, and the .pc files
# name the prefix installed to. The same again after the tree is moved elsewhere: run paths and
# the CMake package are relative to themselves, and pkg-config is told the new prefix
# (--define-variable=prefix=NEW, as for any .pc file).
#
#   install_test.sh BUILD_DIR OUTSIDE_PROJECT_DIR VERSION
set -euo pipefail
build=$(readlink -f "$1")
outside=$(readlink -f "$2")
version=$3  # project(VERSION)
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_PATH CMAKE_PREFIX_PATH
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish

# The three programs, each checking its own result; the drop-in's dgemm must go through tandem.
run_programs() {
  local dir=$1 how=$2
  "$dir/outside_c" && ok "$how: C program" || bad "$how: C program"
  "$dir/outside_cxx" && ok "$how: C++ program" || bad "$how: C++ program"
  if TANDEM_VERBOSE=1 TANDEM_MIN_MNK=0 "$dir/outside_blas" 2> "$work/blas.err"; then
    grep -q "^tandem: dgemm m=40 n=40 k=40" "$work/blas.err" && ok "$how: drop-in BLAS program" ||
      bad "$how: the drop-in's dgemm did not go through tandem: $(cat "$work/blas.err")"
  else
    bad "$how: drop-in BLAS program: $(cat "$work/blas.err")"
  fi
}

# The installed command, started from the prefix alone.
check_command() {
  local prefix=$1 how=$2 out
  out=$("$prefix/bin/tandem" --version 2>&1) && [ "$out" = "tandem $version" ] &&
    ok "$how: bin/tandem --version: $out" || bad "$how: bin/tandem --version: $out"
}

# The pkg-config route: plain compiler commands, as a Makefile would write them. Any further
# arguments go to every pkg-config call.
build_with_pkg_config() {
  local prefix=$1 out=$2
  shift 2
  local pcdir
  pcdir=$(dirname "$(find "$prefix" -name tandem.pc | head -1)")
  export PKG_CONFIG_PATH=$pcdir
  local libdir
  libdir=$(pkg-config "$@" --variable=libdir tandem)
  mkdir -p "$out"
  # shellcheck disable=SC2046  # pkg-config's flags are meant to be split
  cc -std=c99 "$outside/outside.c" $(pkg-config "$@" --cflags --libs tandem) -Wl,-rpath,"$libdir" \
    -o "$out/outside_c" &&
    c++ -std=c++17 "$outside/outside.cpp" $(pkg-config "$@" --cflags --libs tandem) \
      -Wl,-rpath,"$libdir" -o "$out/outside_cxx" &&
    cc -std=c99 "$outside/outside_blas.c" $(pkg-config "$@" --cflags --libs tandem-blas) -lm \
      -Wl,-rpath,"$libdir" -o "$out/outside_blas"
  local status=$?
  unset PKG_CONFIG_PATH
  return $status
}

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log"; echo "FAILED: cmake --install"; exit 1; }
for f in include/tandem/tandem.h include/tandem/tandem.hpp include/tandem/version.h; do
  [ -f "$prefix/$f" ] && ok "installed $f" || bad "$f is not installed"
done
check_command "$prefix" "installed"
# Where the compiler has a multiarch triplet (Debian), the libraries go to lib/<triplet>
# (cmake/install_dirs.cmake), and the pkg-config files say so.
triplet=$(cc -print-multiarch 2> /dev/null || true)
libdir=$prefix/lib${triplet:+/$triplet}
[ -e "$libdir/libtandem.so.0" ] && [ -e "$libdir/libtandem_blas.so.0" ] &&
  [ -e "$libdir/cmake/tandem/tandemConfig.cmake" ] && ok "libraries in ${libdir#"$prefix"/}" ||
  bad "no libtandem.so.0, libtandem_blas.so.0 and cmake/tandem in $libdir"
pc_prefix=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=prefix tandem 2>&1)
pc_libdir=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=libdir tandem-blas 2>&1)
[ "$pc_prefix" = "$prefix" ] && [ "$pc_libdir" = "$libdir" ] && ok "tandem.pc's prefix is $prefix" ||
  bad "the .pc files say prefix '$pc_prefix' and libdir '$pc_libdir', not $prefix and $libdir"

if cmake -S "$outside" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DEXPECTED_VERSION="$version" > "$work/cmake.log" 2>&1 &&
  cmake --build "$work/cmake-build" >> "$work/cmake.log" 2>&1; then
  grep "found tandem" "$work/cmake.log"
  ok "find_package(tandem) and tandem::tandem, tandem::blas"
  run_programs "$work/cmake-build" "find_package"
else
  cat "$work/cmake.log"
  bad "the outside project does not build through find_package"
fi

if build_with_pkg_config "$prefix" "$work/pc-build" 2> "$work/pc.log"; then
  ok "pkg-config tandem, tandem-blas"
  run_programs "$work/pc-build" "pkg-config"
else
  cat "$work/pc.log"
  bad "the outside programs do not build through pkg-config"
fi

# Moved: nothing may point at the prefix it was installed to.
mv "$prefix" "$work/moved"
check_command "$work/moved" "moved"
if build_with_pkg_config "$work/moved" "$work/pc-moved" --define-variable=prefix="$work/moved" \
  2> "$work/pc.log"; then
  run_programs "$work/pc-moved" "pkg-config, moved tree"
else
  cat "$work/pc.log"
  bad "the outside programs do not build through pkg-config from the moved tree"
fi

finish
