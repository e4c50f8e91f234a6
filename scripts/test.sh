#!/usr/bin/env bash
# The README's test command: set up, build, run the whole suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
mkdir -p Testing
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 900 2>&1 | tee Testing/ctest-output.txt || status=$?
# The reference BLAS testers' verdicts, shown whether they passed or not (ctest keeps every
# test's output in its log).
echo "Reference BLAS testers under libtandem_blas.so:"
grep -E "^(== x|  (cblas_[sd]gemm|[SD]GEMM) |  tandem served|  of them split|  -> |all reference testers|REFERENCE TESTERS)" \
  Testing/Temporary/LastTest.log | sed 's/^/  /' || true
# ctest's own verdict, last.
echo
grep -E "tests passed|tests failed" Testing/ctest-output.txt | tail -n 1
exit $status
