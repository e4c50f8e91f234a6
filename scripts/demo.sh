#!/usr/bin/env bash
# The README's main-job command: set up, build, then `tandem compare` on the default OpenCL
# device (a quick tune first if this machine has no profile yet); table on stdout, CSV, JSON and
# an SVG plot in build/ (compare says where it wrote them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/tandem compare --out-csv build/compare.csv --out-json build/compare.json \
  --out-plot build/compare.svg "$@"
