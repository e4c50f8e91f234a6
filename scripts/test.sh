#!/usr/bin/env bash
# The README's test command: set up, build, run the whole suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
