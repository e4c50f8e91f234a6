#!/usr/bin/env bash
# Configures and builds tandem in ./build (Release, warnings as errors), after setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTANDEM_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
