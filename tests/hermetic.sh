# Sourced by the end-to-end test scripts so that each run is hermetic: a fresh directory for its
# files ($work), with an empty profile directory ($TANDEM_PROFILE_DIR) and a temporary directory
# ($TMPDIR) of its own inside, all removed when the script exits. A script keeps any other file it
# needs in $work rather than setting an EXIT trap of its own, which would replace this one.
work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
# Replaced even when inherited, as tests/hermetic_main.cpp does for the GoogleTest executables: an
# exported TANDEM_PROFILE_DIR may be the user's own, whose profile changes what tandem does.
export TANDEM_PROFILE_DIR=$work/profiles TMPDIR=$work/tmp
mkdir "$TANDEM_PROFILE_DIR" "$TMPDIR"
