#!/usr/bin/env bash
# The README's main-job command: set up, build, then `tandem compare` on the default OpenCL
# device (a quick tune first if this machine has no profile yet); table on stdout, CSV, JSON and
# an SVG plot in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/tandem compare --csv build/compare.csv --json build/compare.json --plot build/compare.svg "$@"
echo "wrote build/compare.csv, build/compare.json and build/compare.svg"
