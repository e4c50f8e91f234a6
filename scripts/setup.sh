#!/usr/bin/env bash
# Installs the Debian 12 packages tandem builds and tests with, skipping what is already there.
# Both README commands and CI run it; it needs root (apt-get) only when something is missing.
set -euo pipefail

packages=(
  cmake g++ make pkg-config clang-format clang-tidy
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libopenblas-dev libtbb-dev libhwloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libblas-test libblas3 liblapack-test python3-numpy
  python3-scipy  # tests only (tests/scipy_dropin.sh: scipy.linalg.blas level 3 through the drop-in)
  r-base-core  # tests only (tests/r_dropin.sh: R's crossprod and %*% through the drop-in)
  nlohmann-json3-dev libcli11-dev
  libplplot-dev  # tandem compare's plot (PLplot's SVG driver, through cli/plot.cpp)
  libpowercap-dev  # RAPL through libpowercap (optional: without it, powercap sysfs by hand)
  librsvg2-bin  # tests only: rsvg-convert renders compare's plots to PNG to check them
  python3-pil  # tests only: tests/plot_check.py reads the colours of those PNGs
  locales  # tests only: localedef's sources for a locale with a decimal comma (tests/env_test.cpp)
  dpkg-dev file  # cpack -G DEB: dpkg-shlibdeps for the package's dependencies, file to find ELF files
  lintian  # tests only: ctest's deb checks each Debian package with it (tests/deb_test.sh)
  libclblast-dev  # bench only (bench/vs_clblast): never linked into the library
  # tests only (issue 16): clang and its runtimes for the sanitizer and fuzz builds
  # (scripts/sanitize.sh), llvm for llvm-symbolizer (without it the sanitizers' reports have no
  # function names, which their suppressions match), Oclgrind for the kernels (ctest oclgrind)
  clang libclang-rt-14-dev llvm oclgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
