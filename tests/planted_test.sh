#!/usr/bin/env bash
# Things planted at every path the tandem command writes or reads (issue 39): symbolic links (to a
# victim file that nothing may change), FIFOs with no one at the other end, and device nodes, in
# place of each file and at the name its temporary file once had (FILE.tmp); a write that fails
# partway (a file-size limit standing in for a full disk); and no HOME. Every command runs under a
# timeout, so a hang fails here. The rule they all go through is src/base/files.hpp's.
#
#   planted_test.sh TANDEM
set -u
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"    # ok, bad, finish
victim=$work/victim
echo victim > "$victim"
untouched() { [ "$(cat "$victim")" = victim ] || bad "$1: the victim file was written"; }
cd "$work"
# Device nodes of our own (a null, a full and a zero device) where we may make them: never the
# system's, which a broken rule would replace (it once replaced /dev/null). Without them (not
# root), the device cases are left out.
devices=()
if mknod "$work/null" c 1 3 2> /dev/null && mknod "$work/full" c 1 7 && mknod "$work/zero" c 1 5; then
  devices=("$work/null" "$work/full" "$work/zero")
else
  echo "skipped: device nodes (this user cannot make them)"
fi
mkfifo "$work/fifo"

# A profile to export and import: a tiny tune (no direct kernel, no model: seconds).
tune=(tune --precision s --small-space --budget-evals 1 --sizes 32 --top-kernels 1 --parts 2
  --reps 1 --no-direct --no-model --no-batch)
run 300 "$tandem" "${tune[@]}"
[ $rc -eq 0 ] || { echo "FAILED: tandem tune: $err"; exit 1; }
profile=$("$tandem" profile path)
cp "$profile" "$work/good.json"

# profile export: a link, a FIFO, devices (a full one among them): usage errors, at once; a link at FILE.tmp
# is not followed.
for target in "$work/link" "$work/fifo" "${devices[@]}"; do
  rm -f "$work/link" && ln -s "$victim" "$work/link"
  run 20 "$tandem" profile export "$target"
  expect "profile export to $target is refused" 2 "cannot write '$target': it is a"
done
untouched "profile export"
ln -s "$victim" "$work/exported.json.tmp"
run 60 "$tandem" profile export "$work/exported.json"
[ $rc -eq 0 ] && cmp -s "$work/exported.json" "$profile" && ok "export: a link at FILE.tmp is not followed" ||
  bad "export beside a link at FILE.tmp (exit $rc): $err"
untouched "export beside a link at FILE.tmp"

# A write that fails partway (the profile is larger than 1 KiB): the old file stays whole, no
# temporary file is left, and the failure is reported.
echo old > "$work/kept.json"
run 60 bash -c 'trap "" XFSZ; ulimit -f 1; exec "$@"' - "$tandem" profile export "$work/kept.json"
expect "export that fails partway is reported" 1 "cannot write $work/kept.json"
[ "$(cat "$work/kept.json")" = old ] && ok "the old file is whole" || bad "the old file was changed"
# files::replace's temporary files are .NAME.<16 hex digits>.tmp.
temporaries() { ls -A "$1" | grep -E '^\..*\.[0-9a-f]{16}\.tmp$'; }
[ -z "$(temporaries "$work")" ] && ok "no temporary file left" || bad "left: $(temporaries "$work")"
rm -f "$work"/*.tmp

# profile import and tune: a link at FILE.tmp in the profile directory is not followed; a link at
# the profile's own name stops them (tune before it measures anything).
ln -s "$victim" "$profile.tmp"
run 60 "$tandem" profile import "$work/good.json"
[ $rc -eq 0 ] && cmp -s "$profile" "$work/good.json" && ok "import beside a link at FILE.tmp" ||
  bad "import beside a link at FILE.tmp (exit $rc): $err"
run 300 "$tandem" "${tune[@]}"
[ $rc -eq 0 ] && ok "tune beside a link at FILE.tmp" || bad "tune beside a link at FILE.tmp: $err"
untouched "import and tune beside a link at FILE.tmp"
rm -f "$profile" "$profile.tmp"
ln -s "$victim" "$profile"
run 60 "$tandem" profile import "$work/good.json"
expect "import over a link is refused" 1 "it is a symbolic link"
run 60 "$tandem" "${tune[@]}"
grep -q "^tune: " <<<"$err" && rc=-1  # a progress line: it measured first
expect "tune over a link stops at once" 1 "cannot write the profile .*: it is a symbolic link"
untouched "import and tune over a link"
# A link to /dev/zero and a FIFO as the profile the lookup reads: refused, no hang (a read
# writes nothing, so the system's device is safe here).
rm -f "$profile" && ln -s /dev/zero "$profile"
run 60 "$tandem" gemm --m 64 --n 64 --k 64 --reps 1
expect "a link to /dev/zero as the profile is not read" 0 "is not a regular file"
rm -f "$profile" && mkfifo "$profile"
run 60 "$tandem" gemm --m 64 --n 64 --k 64 --reps 1
expect "a FIFO as the profile is not read" 0 "is not a regular file"
rm -f "$profile"

# compare's outputs: each refused where a link, FIFO or device is; a link at FILE.tmp is not
# followed; a write that fails partway exits 1 and leaves no temporary file.
compare=(compare --no-tune --no-power --sizes 32 --precision s --strategies cpu --reps 1)
for kind in csv json plot; do
  for target in "$work/link" "$work/fifo" "${devices[@]}"; do
    rm -f "$work/link" && ln -s "$victim" "$work/link"
    files=()  # this output at the target, the others none
    for o in csv json plot; do [ $o = $kind ] && files+=(--out-$o "$target") || files+=(--out-$o ""); done
    run 20 "$tandem" "${compare[@]}" "${files[@]}"
    expect "compare --out-$kind $target is refused at once" 2 "cannot write '$target': it is a"
  done
done
untouched "compare's outputs"
mkdir "$work/outs" && for f in c.csv c.json c.svg; do ln -s "$victim" "$work/outs/$f.tmp"; done
run 120 "$tandem" "${compare[@]}" --out-csv outs/c.csv --out-json outs/c.json --out-plot outs/c.svg
[ $rc -eq 0 ] && [ -s outs/c.csv ] && [ -s outs/c.json ] && [ -s outs/c.svg ] &&
  ok "compare beside links at FILE.tmp" || bad "compare beside links at FILE.tmp (exit $rc): $err"
untouched "compare beside links at FILE.tmp"
rm -rf "$work/outs" && mkdir "$work/outs"
run 120 bash -c 'trap "" XFSZ; ulimit -f 1; exec "$@"' - "$tandem" "${compare[@]}" \
  --out-csv outs/c.csv --out-json outs/c.json --out-plot outs/c.svg
expect "compare's outputs that fail partway are reported" 1 "cannot write outs/c.svg: File too large"
[ ! -e outs/c.svg ] && [ -z "$(temporaries outs)" ] && ok "no partial plot, no temporary file" ||
  bad "left in outs: $(ls -A outs)"

# kernel --out-dir: a link in place of one of its files stops it before the device is opened.
mkdir "$work/k" && ln -s "$victim" "$work/k/kernel.cl"
run 60 "$tandem" kernel --out-dir "$work/k"
expect "kernel --out-dir with a link as kernel.cl" 2 "kernel.cl: it is a symbolic link"
untouched "kernel --out-dir"

# tune --log: read to resume and appended to; a link, a FIFO, devices (a zero device among them):
# refused at once (a FIFO hung, /dev/zero was read to 1.1 GB).
for target in "$work/link" "$work/fifo" "${devices[@]}"; do
  rm -f "$work/link" && ln -s "$victim" "$work/link"
  run 20 "$tandem" tune --no-save --log "$target"
  expect "tune --log $target is refused at once" 2 "cannot write '$target': it is a"
done
untouched "tune --log"

# TANDEM_LOG: a FIFO with no reader (the first line hung), a link, a device: a warning, and the
# lines on stderr.
gemm=(gemm --m 64 --n 64 --k 64 --reps 1 --strategy cpu)
for target in "$work/fifo" "$work/link" "${devices[@]}"; do
  rm -f "$work/link" && ln -s "$victim" "$work/link"
  run 60 env TANDEM_VERBOSE=1 TANDEM_LOG="$target" "$tandem" "${gemm[@]}"
  if [ $rc -eq 0 ] && grep -q "cannot open TANDEM_LOG=$target (it is a" <<<"$err" &&
    grep -q "^tandem pid=[0-9]*: sgemm m=64" <<<"$err"; then
    ok "TANDEM_LOG=$target: refused, lines on stderr"
  else
    bad "TANDEM_LOG=$target (exit $rc): $err"
  fi
done
untouched "TANDEM_LOG"

# No HOME: no folder in the shared temporary directory; the runtime directory where it is the
# user's alone, else profiles in memory (said once).
nohome=(env -u HOME -u XDG_CACHE_HOME -u TANDEM_PROFILE_DIR)
mkdir -m 700 "$work/run"
run 60 "${nohome[@]}" XDG_RUNTIME_DIR="$work/run" "$tandem" profile path
[ $rc -eq 0 ] && grep -q "^$work/run/tandem/" "$work/out" && ok "no HOME: the private runtime directory" ||
  bad "no HOME, private XDG_RUNTIME_DIR (exit $rc): $(cat "$work/out") $err"
chmod 755 "$work/run"
run 60 "${nohome[@]}" XDG_RUNTIME_DIR="$work/run" "$tandem" gemm --m 64 --n 64 --k 64 --reps 1
[ $rc -eq 0 ] && [ "$(grep -c "profiles are kept in memory only" <<<"$err")" -eq 1 ] &&
  ok "no HOME and a runtime directory others may read: memory only, said once" ||
  bad "no HOME, shared XDG_RUNTIME_DIR (exit $rc): $err"
run 60 "${nohome[@]}" -u XDG_RUNTIME_DIR "$tandem" profile path
expect "no HOME: profile path says there is none" 1 "no profile directory"
[ ! -e "$TMPDIR/tandem" ] && ok "nothing in the temporary directory" || bad "made $TMPDIR/tandem"

finish
