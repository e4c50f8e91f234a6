# shellcheck shell=bash
# Sourced on the GPU host by bench/call_phases.sh and bench/small_buckets.sh, from the project
# root: unpacks .gpu/phases.tar.xz (bash bench/call_phases.sh pack) into /tmp/phases, puts its
# programs and libraries first, and gives the run OpenBLAS's core type and an empty profile folder.
rm -rf /tmp/phases && tar xJf .gpu/phases.tar.xz -C /tmp
# shellcheck disable=SC1091
source /tmp/phases/env.sh
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
TANDEM_PROFILE_DIR=$(mktemp -d)
export TANDEM_PROFILE_DIR
