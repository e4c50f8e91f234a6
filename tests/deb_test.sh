#!/usr/bin/env bash
# The Debian package end to end: `cpack -G DEB` builds it, dpkg installs it, its postinst makes
# libtandem_blas.so the system's libblas.so.3 (update-alternatives), and numpy, which links
# libblas.so.3, then runs its products through tandem (TANDEM_VERBOSE lines) and still gets them
# right; after `dpkg --purge` the alternative is what it was and numpy's calls go to OpenBLAS
# again (no tandem lines). Needs root; skipped (exit 77) otherwise.
#
# It changes the system, so where it can (root that may make mount namespaces and overlayfs, as
# on a shared development machine) it runs in a private mount namespace over copy-on-write
# /usr, /etc and /var, and nothing outside ever sees the package. Where it cannot (a CI
# container), or with TANDEM_DEB_TEST_IN_PLACE=1, it changes the system itself and puts it back
# on any exit (trap); ctest runs it alone (RUN_SERIAL) so no other test sees the swap.
#
#   deb_test.sh BUILD_DIR VERSION
set -euo pipefail
build=$(readlink -f "$1")
version=$2
py=/usr/bin/python3  # Debian's python3, the one python3-numpy belongs to
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: installing a package needs root (CI runs as root)"
  exit 77
fi
for tool in cpack dpkg dpkg-query update-alternatives; do
  command -v "$tool" > /dev/null || { echo "SKIPPED: no $tool"; exit 77; }
done
"$py" -c "import numpy" 2> /dev/null || { echo "SKIPPED: python3-numpy is not installed"; exit 77; }

if [ -z "${TANDEM_DEB_TEST_NAMESPACE:-}" ] && [ "${TANDEM_DEB_TEST_IN_PLACE:-0}" != 1 ] &&
  unshare --mount --propagation private true 2> /dev/null; then
  TANDEM_DEB_TEST_NAMESPACE=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish

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
if [ ${#mounted[@]} -gt 0 ]; then
  echo "note: in a private mount namespace over copy-on-write ${mounted[*]}: the system is untouched"
elif dpkg-query -W -f='${Status}' tandem 2> /dev/null | grep -q "installed"; then
  echo "SKIPPED: a tandem package is installed on this system, and this test would purge it"
  exit 77
fi

# The system's BLAS as it is now: what to put back.
# (awk reads to the end: an early exit would break the pipe, which pipefail counts as a failure.)
name=$(update-alternatives --get-selections | awk '$1 ~ /^libblas\.so\.3-/ && !n++ {print $1}')
[ -n "$name" ] || { echo "FAILED: no libblas.so.3 alternative (scripts/setup.sh installs OpenBLAS)"; exit 1; }
query() { update-alternatives --query "$name" | awk -v k="$1:" '$1 == k && !n++ {print $2}'; }
link=$(query Link)
status_before=$(query Status)
value_before=$(query Value)
echo "before: $name is $status_before, $link -> $value_before"

restore() {
  set +e  # every step is tried, whatever the one before did
  if dpkg-query -W -f='${Status}' tandem 2> /dev/null | grep -q -v "not-installed"; then
    dpkg --purge tandem > /dev/null 2>&1 || echo "WARNING: dpkg --purge tandem failed"
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

cd "$work"
if cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg" > "$work/cpack.log" 2>&1; then
  deb=$(ls "$work"/pkg/tandem_*.deb)
  ok "cpack -G DEB: $(basename "$deb")"
else
  cat "$work/cpack.log"
  echo "FAILED: cpack -G DEB"
  exit 1
fi

dpkg -i "$deb" > "$work/dpkg.log" 2>&1 && ok "dpkg -i" || { cat "$work/dpkg.log"; bad "dpkg -i"; }
blas=$(dpkg -L tandem | grep "/libtandem_blas.so.0$" || true)
[ -n "$blas" ] && [ "$(query Value)" = "$blas" ] &&
  [ "$(readlink -f "$link")" = "$(readlink -f "$blas")" ] &&
  ok "postinst: $link -> $blas" || bad "postinst: $name is $(query Value), not $blas"
out=$(/usr/bin/tandem --version 2>&1) && [ "$out" = "tandem $version" ] &&
  ok "/usr/bin/tandem --version: $out" || bad "/usr/bin/tandem --version: $out"
[ "$(pkg-config --modversion tandem 2>&1)" = "$version" ] && ok "pkg-config finds tandem $version" ||
  bad "pkg-config --modversion tandem: $(pkg-config --modversion tandem 2>&1)"
if run_numpy; then
  grep "^tandem: " "$work/numpy.err" | head -4
  for call in sgemm dgemm; do
    grep -q "^tandem: $call m=" "$work/numpy.err" && ok "numpy's $call went through tandem" ||
      bad "numpy's $call did not go through tandem"
  done
else
  cat "$work/numpy.err"
  bad "numpy with the package installed"
fi

dpkg --purge tandem > "$work/dpkg.log" 2>&1 && ok "dpkg --purge" || { cat "$work/dpkg.log"; bad "dpkg --purge"; }
[ "$(query Value)" = "$value_before" ] && [ "$(query Status)" = "$status_before" ] &&
  ! update-alternatives --query "$name" | grep -q "libtandem_blas" &&
  ok "prerm: $link -> $(query Value) again ($(query Status))" ||
  bad "after purge $name is $(query Status) $(query Value), not $status_before $value_before"
if run_numpy; then
  grep -q "^tandem: " "$work/numpy.err" && bad "tandem still served numpy after the purge" ||
    ok "numpy on OpenBLAS again: no tandem lines"
else
  cat "$work/numpy.err"
  bad "numpy after the purge"
fi

finish
