# Sourced by the end-to-end test scripts that report check by check: ok and bad print one line
# each, bad counts the failure in $fails, and finish prints the count and returns whether none
# failed (the script's last command, so its exit status).
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fails=$((fails + 1)); }
finish() {
  echo "$fails failed"
  [ "$fails" -eq 0 ]
}
