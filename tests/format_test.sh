#!/usr/bin/env bash
# Every C and C++ file of tandem is as the repo's .clang-format (Google, 100 columns) would write
# it, so the style stays one. To fix: clang-format -i on the files listed.
# Usage: format_test.sh SOURCE_DIR
set -uo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "FAIL: clang-format is not installed (scripts/setup.sh)"; exit 1; }
files=$(find src include tuner cli power tests bench \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | sort)
[ -n "$files" ] || { echo "FAIL: no sources found"; exit 1; }
bad=""
for f in $files; do
  clang-format --style=file --dry-run -Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -n "$bad" ]; then
  echo "FAIL: not formatted as .clang-format says (clang-format -i to fix):"
  for f in $bad; do echo "  $f"; done
  exit 1
fi
echo "format: $(echo "$files" | wc -w) files as .clang-format writes them ($(clang-format --version))"
