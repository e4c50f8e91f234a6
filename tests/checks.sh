# Sourced by the end-to-end test scripts that report check by check: ok and bad print one line
# each, bad counts the failure in $fails, and finish prints the count and returns whether none
# failed (the script's last command, so its exit status). run and expect check a command's exit
# status and message (they need $work, tests/hermetic.sh's).
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAILED: $*"; fails=$((fails + 1)); }
finish() {
  echo "$fails failed"
  [ "$fails" -eq 0 ]
}
# run SECONDS COMMAND...: COMMAND under a timeout; its status in $rc, its output in $out and $err.
run() {
  local limit=$1
  shift
  timeout -k 5 "$limit" "$@" > "$work/out" 2> "$work/err"
  rc=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}
# expect WHAT STATUS PATTERN: the last run exited with STATUS and said PATTERN on stderr.
expect() {
  if [ "$rc" -eq "$2" ] && grep -q -- "$3" <<<"$err"; then
    ok "$1"
  else
    bad "$1 (exit $rc, wanted $2 and '$3'): $(head -c 600 <<<"$err")"
  fi
}
