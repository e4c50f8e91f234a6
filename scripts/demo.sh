#!/usr/bin/env bash
# The README's main-job command: set up, build, run the demo on the default OpenCL device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/bench/tandem_demo "$@"
