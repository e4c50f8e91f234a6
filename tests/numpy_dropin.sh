#!/usr/bin/env bash
# numpy with libtandem_blas.so gives the same a @ b and a.T @ a as without it (and, complex, a @ b
# and a.conj().T @ a), and TANDEM_VERBOSE shows the sgemm, dgemm, ssyrk, dsyrk, cgemm and zgemm
# calls going through tandem. Skipped (exit 77, which
# ctest reports as skipped) only when python3-numpy is not installed.
#
#   numpy_dropin.sh LIBTANDEM_BLAS SCRIPT_DIR preload|libblas
#
# preload: LD_PRELOAD=libtandem_blas.so. libblas: libtandem_blas.so stands in for libblas.so.3
# (what update-alternatives does system-wide, here through LD_LIBRARY_PATH), so numpy's other
# BLAS and LAPACK calls must still find OpenBLAS.
set -euo pipefail
lib=$(readlink -f "$1")
here=$2
mode=${3:-preload}
py=/usr/bin/python3   # Debian's python3, the one python3-numpy belongs to
if ! "$py" -c "import numpy" 2>/dev/null; then
  echo "SKIPPED: python3-numpy is not installed (scripts/setup.sh installs it)"
  exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
status=0
"$py" "$here/numpy_dropin.py" run "$work/ref.npz"
if [ "$mode" = libblas ]; then
  mkdir "$work/lib" && ln -s "$lib" "$work/lib/libblas.so.3"
  TANDEM_VERBOSE=1 LD_LIBRARY_PATH="$work/lib" "$py" "$here/numpy_dropin.py" run "$work/out.npz" 2> "$work/err"
  # Everything else numpy takes from libblas.so.3 still works: a LAPACK solve and a dot product.
  LD_LIBRARY_PATH="$work/lib" "$py" -c "
import numpy as np
a = np.random.default_rng(1).standard_normal((300, 300)); x = np.linalg.solve(a, np.ones(300))
assert np.allclose(a @ x, 1.0), 'solve'; assert abs(np.dot(a[0], a[1]) - sum(a[0] * a[1])) < 1e-9
print('LAPACK solve and dot through the system BLAS: ok')" || status=1
else
  TANDEM_VERBOSE=1 LD_PRELOAD=$lib "$py" "$here/numpy_dropin.py" run "$work/out.npz" 2> "$work/err"
fi
grep "tandem:" "$work/err" || true
# a @ b calls gemm; a.T @ a calls syrk; complex, a @ b and a.conj().T @ a both call gemm.
for call in "sgemm m=2048 n=2048 k=2048" "dgemm m=2048 n=2048 k=2048" \
            "ssyrk n=1024 k=1024" "dsyrk n=1024 k=1024" \
            "cgemm m=512 n=512 k=512" "zgemm m=512 n=512 k=512"; do
  if grep -q "tandem: $call" "$work/err"; then
    echo "${call%% *}: numpy's call went through tandem"
  else
    echo "${call%% *}: numpy's call did NOT go through tandem"; status=1
  fi
done
# Each complex precision makes two of them: a @ b (NoTrans) and a.conj().T @ a (Trans).
for p in c z; do
  n=$(grep -c "tandem: ${p}gemm m=512 n=512 k=512" "$work/err" || true)
  [ "$n" -ge 2 ] || { echo "${p}gemm: $n of numpy's 2 calls went through tandem"; status=1; }
done
"$py" "$here/numpy_dropin.py" compare "$work/ref.npz" "$work/out.npz" || status=1
exit $status
