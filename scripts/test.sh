#!/usr/bin/env bash
# The README's test command: set up, build, run the whole suite with ctest, then issue 16's
# sanitizer and fuzz jobs (scripts/sanitize.sh), each in a build tree of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
mkdir -p build/Testing
status=0
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 900) 2>&1 |
  tee build/Testing/ctest-output.txt || status=$?

# The library's suites under ASan+UBSan and under TSan, and the fuzz targets for a bounded time:
# their whole output is in build/Testing/sanitize-JOB.log, a line each here.
jobs_summary=()
for job in address thread fuzz; do
  start=$SECONDS
  if bash scripts/sanitize.sh "$job" >"build/Testing/sanitize-$job.log" 2>&1; then
    jobs_summary+=("$job: passed ($((SECONDS - start)) s)")
  else
    status=1
    jobs_summary+=("$job: FAILED ($((SECONDS - start)) s): build/Testing/sanitize-$job.log")
    echo "== scripts/sanitize.sh $job failed; the end of its output:"
    tail -n 100 "build/Testing/sanitize-$job.log"
  fi
done

# The reference BLAS testers' verdicts, shown whether they passed or not (ctest keeps every
# test's output in its log).
echo "Reference BLAS testers under libtandem_blas.so:"
grep -E "^(== x|  (cblas_[sd]gemm|[SD]GEMM) |  tandem served|  of them split|  -> |all reference testers|REFERENCE TESTERS)" \
  build/Testing/Temporary/LastTest.log | sed 's/^/  /' || true
echo "Sanitizer and fuzz jobs (scripts/sanitize.sh):"
printf '  %s\n' "${jobs_summary[@]}"
# ctest's own verdict, last.
echo
grep -E "tests passed|tests failed" build/Testing/ctest-output.txt | tail -n 1
exit $status
