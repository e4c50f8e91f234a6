#!/usr/bin/env bash
# Runs one test program hermetically, as tests/hermetic.sh makes the scripts: its own empty
# profile and temporary directories, removed when it ends. For the C test programs, which have no
# hermetic_main.cpp to do it (a profile in the user's cache would otherwise reach them).
#
#   hermetic_run.sh PROGRAM [ARGUMENTS...]
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"
"$@"
