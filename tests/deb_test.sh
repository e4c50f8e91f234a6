#!/usr/bin/env bash
# The Debian packages end to end (cmake/package_deb.cmake): `cpack -G DEB` builds the four of
# them (libtandem0, libtandem-blas0, libtandem-dev, tandem), lintian finds no error and no
# warning that is not overridden with its reason, and each holds what it should, depending on
# what it needs. Then, installed with dpkg:
#   - the libraries alone (no PLplot, no libpowercap among their dependencies) change nothing:
#     the drop-in is offered as libblas.so.3 below OpenBLAS, and numpy stays on OpenBLAS;
#   - the command README.Debian documents (update-alternatives --set) makes it the system's
#     BLAS, and numpy, which links libblas.so.3, then runs its products through tandem
#     (TANDEM_VERBOSE lines) and still gets them right;
#   - with the development files and the command: tandem --version, its manual page naming
#     every subcommand, pkg-config with flags that collapse to the system's directories, and the
#     outside project (tests/outside_project) built through find_package and run;
#   - removing libtandem-blas0 puts OpenBLAS back as libblas.so.3 and numpy on it, and purging
#     every package leaves no file and no alternative of tandem's behind.
# Needs root; skipped (exit 77) otherwise.
#
# It changes the system, so where it can (root that may make mount namespaces and overlayfs, as
# on a shared development machine) it runs in a private mount namespace over copy-on-write
# /usr, /etc and /var, and nothing outside ever sees the packages. Where it cannot (a CI
# container), or with TANDEM_DEB_TEST_IN_PLACE=1, it changes the system itself and puts it back
# on any exit (trap); ctest runs it alone (RUN_SERIAL) so no other test sees the swap.
#
#   deb_test.sh BUILD_DIR VERSION
set -euo pipefail
build=$(readlink -f "$1")
version=$2
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
py=/usr/bin/python3  # Debian's python3, the one python3-numpy belongs to
packages=(libtandem0 libtandem-blas0 libtandem-dev tandem)
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: installing a package needs root (CI runs as root)"
  exit 77
fi
for tool in cpack dpkg dpkg-deb dpkg-query update-alternatives; do
  command -v "$tool" > /dev/null || { echo "SKIPPED: no $tool (not Debian?)"; exit 77; }
done
# On Debian, what scripts/setup.sh installs is expected: a missing lintian is a failure, not a
# reason to skip the packages' check.
for tool in lintian pkg-config nm cc; do
  command -v "$tool" > /dev/null || { echo "FAILED: no $tool (scripts/setup.sh installs it)"; exit 1; }
done
"$py" -c "import numpy" 2> /dev/null || { echo "SKIPPED: python3-numpy is not installed"; exit 77; }

if [ -z "${TANDEM_DEB_TEST_NAMESPACE:-}" ] && [ "${TANDEM_DEB_TEST_IN_PLACE:-0}" != 1 ] &&
  unshare --mount --propagation private true 2> /dev/null; then
  TANDEM_DEB_TEST_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
source "$here/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$here/checks.sh"  # ok, bad, finish

# Copy-on-write system directories, in this process's own mount namespace only.
mounted=()
if [ -n "${TANDEM_DEB_TEST_NAMESPACE:-}" ]; then
  for d in usr etc var; do
    mkdir -p "$work/overlay/$d/upper" "$work/overlay/$d/work"
    if mount -t overlay overlay \
      -o "lowerdir=/$d,upperdir=$work/overlay/$d/upper,workdir=$work/overlay/$d/work" "/$d"; then
      mounted+=("/$d")
    else
      for m in "${mounted[@]}"; do umount "$m"; done
      mounted=()
      echo "note: overlayfs refused /$d: testing on the system itself"
      break
    fi
  done
fi
installed() { dpkg-query -W -f='${Status}' "$1" 2> /dev/null | grep -q " installed$"; }
if [ ${#mounted[@]} -gt 0 ]; then
  echo "note: in a private mount namespace over copy-on-write ${mounted[*]}: the system is untouched"
else
  for p in "${packages[@]}"; do
    if installed "$p"; then
      echo "SKIPPED: $p is installed on this system, and this test would purge it"
      exit 77
    fi
  done
fi

# The system's BLAS as it is now: what to put back.
# (awk reads to the end: an early exit would break the pipe, which pipefail counts as a failure.)
name=$(update-alternatives --get-selections | awk '$1 ~ /^libblas\.so\.3-/ && !n++ {print $1}')
[ -n "$name" ] || { echo "FAILED: no libblas.so.3 alternative (scripts/setup.sh installs OpenBLAS)"; exit 1; }
triplet=${name#libblas.so.3-}
libdir=/usr/lib/$triplet
query() { update-alternatives --query "$name" | awk -v k="$1:" '$1 == k && !n++ {print $2}'; }
link=$(query Link)
status_before=$(query Status)
value_before=$(query Value)
echo "before: $name is $status_before, $link -> $value_before"

restore() {
  set +e  # every step is tried, whatever the one before did
  local present=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q -v "not-installed" && present+=("$p")
  done
  if [ ${#present[@]} -gt 0 ]; then
    dpkg --purge "${present[@]}" > /dev/null 2>&1 || echo "WARNING: dpkg --purge ${present[*]} failed"
  fi
  # Whatever a broken prerm left registered.
  for path in $(update-alternatives --query "$name" | awk '$1 == "Alternative:" && /tandem/ {print $2}'); do
    update-alternatives --remove "$name" "$path" > /dev/null 2>&1
  done
  if [ "$status_before" = manual ]; then
    update-alternatives --set "$name" "$value_before" > /dev/null 2>&1
  else
    update-alternatives --auto "$name" > /dev/null 2>&1
  fi
  [ "$(query Value)" = "$value_before" ] || echo "WARNING: $name is $(query Value), not $value_before"
}
# A lazy unmount: the namespace's own processes may still hold files there. A signal ends the
# script through its EXIT trap too.
trap 'exit 143' TERM INT HUP
trap 'restore; for m in "${mounted[@]}"; do umount -l "$m" || true; done; rm -rf "$work"' EXIT

# numpy through libblas.so.3: float and double products checked against sums in numpy without
# BLAS, and a LAPACK solve whose other BLAS calls must still find OpenBLAS. Every call goes
# through tandem when tandem is the BLAS (TANDEM_MIN_MNK=0); its lines land in $work/numpy.err.
run_numpy() {
  TANDEM_VERBOSE=1 TANDEM_MIN_MNK=0 "$py" - 2> "$work/numpy.err" << 'PY'
import numpy as np
rng = np.random.default_rng(1)
for dt, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
    a = rng.standard_normal((96, 80)).astype(dt)
    b = rng.standard_normal((80, 64)).astype(dt)
    ref = (a.astype(np.float64)[:, :, None] * b.astype(np.float64)[None, :, :]).sum(axis=1)
    assert np.abs(a @ b - ref).max() <= tol * np.abs(ref).max(), dt
m = rng.standard_normal((200, 200))
assert np.allclose(m @ np.linalg.solve(m, np.ones(200)), 1.0), "solve"
print("numpy: products and solve right")
PY
}
numpy_on_tandem() {
  if run_numpy; then
    grep "^tandem: " "$work/numpy.err" | head -2
    for call in sgemm dgemm; do
      grep -q "^tandem: $call m=" "$work/numpy.err" && ok "$1: numpy's $call went through tandem" ||
        bad "$1: numpy's $call did not go through tandem"
    done
  else
    cat "$work/numpy.err"
    bad "$1: numpy"
  fi
}
numpy_on_openblas() {
  if run_numpy; then
    grep -q "^tandem: " "$work/numpy.err" && bad "$1: tandem served numpy" ||
      ok "$1: numpy on OpenBLAS, no tandem lines"
  else
    cat "$work/numpy.err"
    bad "$1: numpy"
  fi
}
alternative_is() {  # VALUE STATUS WHAT
  [ "$(query Value)" = "$1" ] && [ "$(query Status)" = "$2" ] &&
    [ "$(readlink -f "$link")" = "$(readlink -f "$1")" ] &&
    ok "$3: $link -> $1 ($2)" || bad "$3: $name is $(query Status) $(query Value), not $2 $1"
}

cd "$work"
if cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" > "$work/cpack.log" 2>&1; then
  ok "cpack -G DEB: $(cd "$work/pkg" && echo *.deb)"
else
  cat "$work/cpack.log"
  echo "FAILED: cpack -G DEB"
  exit 1
fi
declare -A deb
for p in "${packages[@]}"; do
  deb[$p]=$(ls "$work/pkg/${p}_"*.deb 2> /dev/null || true)
  [ -n "${deb[$p]}" ] || { echo "FAILED: no $p package among $(ls "$work/pkg")"; exit 1; }
done

# lintian: no error, and no warning that an override does not justify (cmake/deb/*.lintian-overrides).
if lintian --fail-on error,warning "${deb[@]}" > "$work/lintian.log" 2>&1; then
  ok "lintian: no errors, no warnings but the overridden"
else
  grep -v "^running with root" "$work/lintian.log"
  bad "lintian"
fi

# What each package holds, and what it depends on.
contents() { dpkg-deb -c "${deb[$1]}" | awk '{print $6}' | sed 's|^\./|/|'; }
has() {  # PACKAGE PATH...
  local p=$1 f
  shift
  for f in "$@"; do
    contents "$p" | grep -qx "$f" || { bad "$p lacks $f"; return; }
  done
  ok "$p holds $*"
}
has libtandem0 "$libdir/libtandem.so.0" /usr/share/doc/libtandem0/copyright \
  /usr/share/doc/libtandem0/changelog.Debian.gz
has libtandem-blas0 "$libdir/libtandem_blas.so.0" /usr/share/doc/libtandem-blas0/README.Debian
has libtandem-dev "$libdir/libtandem.so" "$libdir/libtandem_blas.so" /usr/include/tandem/tandem.h \
  "$libdir/pkgconfig/tandem.pc" "$libdir/cmake/tandem/tandemConfig.cmake"
has tandem /usr/bin/tandem /usr/share/man/man1/tandem.1.gz
for p in libtandem0 libtandem-blas0; do
  contents "$p" | grep -q -e "\.so$" -e "/include/" -e "/bin/" && bad "$p holds development files or the command" ||
    ok "$p holds no development files and no command"
done
depends() { dpkg-deb -f "${deb[$1]}" Depends; }
for p in "${packages[@]}"; do
  # One clause per requirement: none repeated, none implied by another (a clause whose
  # alternatives include all of another clause's).
  implied=$(depends "$p" | awk -F', ' '{
    for (i = 1; i <= NF; i++) { n[i] = split($i, a, / \| /); for (k = 1; k <= n[i]; k++) alt[i, a[k]] = 1 }
    for (i = 1; i <= NF; i++) for (j = 1; j <= NF; j++) if (i != j) {
      split($j, b, / \| /); sub_ = 1
      for (k = 1; k <= n[j]; k++) if (!((i, b[k]) in alt)) sub_ = 0
      if (sub_ && (n[j] < n[i] || j < i)) { print $i; break } } }')
  [ -z "$implied" ] && ok "$p Depends: $(depends "$p")" || bad "$p Depends repeats itself: $implied"
done
for p in libtandem0 libtandem-blas0 libtandem-dev; do
  depends "$p" | grep -q -e plplot -e powercap && bad "$p depends on PLplot or libpowercap" ||
    ok "$p needs neither PLplot nor libpowercap"
done
depends tandem | grep -q "libtandem0 (= " && depends libtandem-blas0 | grep -q "libtandem0 (= " &&
  depends libtandem-dev | grep -q "libopenblas-dev" && ok "tandem's own packages and libopenblas-dev where needed" ||
  bad "dependencies between the packages"

# The libraries alone: offered as libblas.so.3, chosen by nobody.
if dpkg -i "${deb[libtandem0]}" "${deb[libtandem-blas0]}" > "$work/dpkg.log" 2>&1; then
  ok "dpkg -i libtandem0 libtandem-blas0"
else
  cat "$work/dpkg.log"
  bad "dpkg -i libtandem0 libtandem-blas0"
fi
blas=$(dpkg -L libtandem-blas0 | grep "/libtandem_blas.so.0$" || true)
[ "$blas" = "$libdir/libtandem_blas.so.0" ] && ok "libtandem-blas0: $blas" ||
  bad "libtandem-blas0's drop-in is '$blas', not $libdir/libtandem_blas.so.0"
# (The cache may name /lib for /usr/lib, the same directory on a merged-/usr system.)
ldconfig -p | grep -q "libtandem_blas.so.0 (.*/$triplet/libtandem_blas.so.0$" &&
  ldconfig -p | grep -q "libtandem.so.0 (.*/$triplet/libtandem.so.0$" &&
  ok "the ldconfig trigger ran: the loader's cache has both libraries" ||
  { cat "$work/dpkg.log"; ldconfig -p | grep tandem; bad "ldconfig's cache lacks tandem's libraries"; }
update-alternatives --query "$name" | grep -A1 "^Alternative: $blas$" | grep -q "^Priority: 1$" &&
  ok "postinst: $blas offered as $name at priority 1" || bad "postinst: $blas is not offered at priority 1"
alternative_is "$value_before" "$status_before" "installed, nothing chosen"
numpy_on_openblas "installed, nothing chosen"

# The documented command, as README.Debian writes it (without sudo: this runs as root).
set_command=$(sed -n '/update-alternatives --set/,/[^\\]$/p' /usr/share/doc/libtandem-blas0/README.Debian |
  sed 's/^ *sudo //')
echo "README.Debian: $set_command"
if [ -n "$set_command" ] && bash -c "$set_command" > "$work/ua.log" 2>&1; then
  alternative_is "$blas" manual "update-alternatives --set"
else
  cat "$work/ua.log"
  bad "README.Debian's update-alternatives --set"
fi
numpy_on_tandem "chosen"
undefined=$(nm -D --defined-only "$blas" | awk '{print $3}' | grep -v -E '^(cblas_[a-z0-9_]+|i?[sdcz][a-z0-9]*_)$' || true)
[ -z "$undefined" ] && ok "$blas exports BLAS names alone ($(nm -D --defined-only "$blas" | wc -l))" ||
  bad "$blas exports more than BLAS: $undefined"

# The development files and the command.
if dpkg -i "${deb[libtandem-dev]}" "${deb[tandem]}" > "$work/dpkg.log" 2>&1; then
  ok "dpkg -i libtandem-dev tandem"
else
  cat "$work/dpkg.log"
  bad "dpkg -i libtandem-dev tandem"
fi
out=$(/usr/bin/tandem --version 2>&1) && [ "$out" = "tandem $version" ] &&
  ok "/usr/bin/tandem --version: $out" || bad "/usr/bin/tandem --version: $out"
subcommands=$(/usr/bin/tandem --help | awk '/^Subcommands:/ {s = 1; next} s && NF {print $1}')
missing=""
for s in $subcommands; do
  zcat /usr/share/man/man1/tandem.1.gz | grep -q "^\.B $s$\|^\.BI \"$s " || missing+=" $s"
done
[ -n "$subcommands" ] && [ -z "$missing" ] &&
  ok "tandem(1) names every subcommand: ${subcommands//$'\n'/ }" || bad "tandem(1) lacks:$missing"
pc() { pkg-config "$@" 2>&1 | sed 's/ *$//'; }  # pkgconf ends some lines with a space
[ "$(pc --modversion tandem)" = "$version" ] && ok "pkg-config finds tandem $version" ||
  bad "pkg-config --modversion tandem: $(pc --modversion tandem)"
[ "$(pc --variable=includedir tandem)" = /usr/include ] && [ "$(pc --variable=libdir tandem)" = "$libdir" ] &&
  [ -z "$(pc --cflags tandem)" ] && [ "$(pc --libs tandem)" = "-ltandem" ] &&
  ok "pkg-config: tandem's directories are the system's (no -I, no -L)" ||
  bad "pkg-config tandem: includedir $(pc --variable=includedir tandem), cflags '$(pc --cflags tandem)', libs '$(pc --libs tandem)'"
pc --libs tandem-blas | grep -q -- "^-ltandem_blas .*-lopenblas" && ok "pkg-config --libs tandem-blas: $(pc --libs tandem-blas)" ||
  bad "pkg-config --libs tandem-blas: $(pc --libs tandem-blas)"
if cmake -S "$here/outside_project" -B "$work/outside" -DEXPECTED_VERSION="$version" > "$work/cmake.log" 2>&1 &&
  cmake --build "$work/outside" >> "$work/cmake.log" 2>&1; then
  grep "found tandem" "$work/cmake.log"
  grep -q "found tandem .* in $libdir/cmake/tandem" "$work/cmake.log" &&
    ok "find_package(tandem) from libtandem-dev" || bad "find_package(tandem) found another tandem"
  "$work/outside/outside_c" && "$work/outside/outside_cxx" && ok "the outside C and C++ programs" ||
    bad "the outside C and C++ programs"
  TANDEM_VERBOSE=1 TANDEM_MIN_MNK=0 "$work/outside/outside_blas" 2> "$work/blas.err" &&
    grep -q "^tandem: dgemm m=40 n=40 k=40" "$work/blas.err" && ok "the outside drop-in BLAS program" ||
    bad "the outside drop-in BLAS program: $(cat "$work/blas.err")"
else
  cat "$work/cmake.log"
  bad "the outside project does not build against libtandem-dev"
fi

# Removal: the alternative goes with libtandem-blas0 (libtandem-dev, which needs it, first).
if dpkg -r libtandem-dev libtandem-blas0 > "$work/dpkg.log" 2>&1; then
  ok "dpkg -r libtandem-dev libtandem-blas0"
else
  cat "$work/dpkg.log"
  bad "dpkg -r libtandem-dev libtandem-blas0"
fi
[ "$(query Value)" = "$value_before" ] && ! update-alternatives --query "$name" | grep -q "libtandem_blas" &&
  ok "prerm: $link -> $(query Value) again ($(query Status))" ||
  bad "after removal $name is $(query Status) $(query Value), not $value_before"
numpy_on_openblas "removed"
if dpkg --purge "${packages[@]}" > "$work/dpkg.log" 2>&1; then
  ok "dpkg --purge ${packages[*]}"
else
  cat "$work/dpkg.log"
  bad "dpkg --purge"
fi
left=$(ls -d "$libdir"/libtandem* /usr/include/tandem /usr/bin/tandem /usr/share/doc/libtandem* \
  /usr/share/doc/tandem /usr/share/man/man1/tandem.1.gz 2> /dev/null || true)
[ -z "$left" ] && ok "purged: no file of tandem's left" || bad "left after the purge: $left"

finish
