#!/usr/bin/env bash
# TANDEM_LOG and the verbose lines' terms, through log_test.c on the drop-in (every call routed
# through tandem: TANDEM_MIN_MNK=0):
# - a column-major call (Fortran's dgemm_, CBLAS's CblasColMajor) is described as the caller
#   gave it: m, n, k, layout=col, and the columns of its C that each side computed, adding up to
#   its n; a row-major call counts rows, adding up to its m;
# - TANDEM_LOG=FILE: lines go to the file, each "tandem pid=P[ rank=R]: ..." with the rank from
#   OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK; four processes appending at once leave every
#   line whole and each process's count right;
# - TANDEM_LOG=stderr tags lines on stderr; without TANDEM_LOG they are as before ("tandem: ");
#   a file that cannot be opened is warned about and stderr used instead (tests/planted_test.sh
#   plants FIFOs, links and devices there);
# - control characters in what is logged are escaped: a value cannot forge a line.
#
#   log_test.sh LOG_TEST
set -u
program=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"  # ok, bad, finish
export TANDEM_VERBOSE=1 TANDEM_MIN_MNK=0
unset TANDEM_LOG OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK

# The caller's terms, under a split that gives both sides part of C.
TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5 TANDEM_LOG=$work/one.log "$program" > "$work/out" 2> "$work/err" ||
  bad "log_test under hybrid: $(cat "$work/out" "$work/err")"
cat "$work/one.log"
grep -q "tandem" "$work/err" && bad "lines reached stderr although TANDEM_LOG names a file: $(cat "$work/err")"
"$py" - "$work/one.log" << 'PY' && ok "column-major calls in the caller's terms" || bad "the caller's terms"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, lines
pat = re.compile(r"tandem pid=\d+: ([sd]gemm) m=(\d+) n=(\d+) k=(\d+)( layout=col)? strategy=hybrid "
                 r"gpu_(rows|cols)=(\d+) cpu_(rows|cols)=(\d+) ")
for line, (routine, col) in zip(lines, [("dgemm", True), ("dgemm", True), ("sgemm", False)]):
    g = pat.match(line)
    assert g, line
    assert (g[1], g[2], g[3], g[4]) == (routine, "100", "60", "30"), line
    assert bool(g[5]) == col and g[6] == g[8] == ("cols" if col else "rows"), line
    gpu, cpu = int(g[7]), int(g[9])
    assert gpu > 0 and cpu > 0 and gpu + cpu == (60 if col else 100), line
PY

# Four processes at once into one file, three with a launcher's rank.
reps=300
pids=()
for who in "OMPI_COMM_WORLD_RANK=0" "PMIX_RANK=1" "PMI_RANK=2" "NO_RANK=3"; do
  env "$who" TANDEM_STRATEGY=cpu TANDEM_LOG="$work/all.log" "$program" $reps > "$work/out.$who" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || bad "a process of the four failed"; done
"$py" - "$work/all.log" $((reps + 3)) << 'PY' && ok "4 processes, $((4 * (reps + 3))) whole lines, ranks tagged" || bad "4 processes into one file"
import collections, re, sys
want = int(sys.argv[2])
pat = re.compile(r"tandem pid=(\d+)( rank=(\d))?: [sd]gemm m=\d+ n=\d+ k=\d+( layout=col)? strategy=cpu "
                 r"gpu_(rows|cols)=0 cpu_(rows|cols)=\d+ cpu_threads=\d+ A=\S+ B=\S+ C=\S+ cpu=[0-9.]+ms "
                 r"gpu=[0-9.]+ms kernel=[0-9.]+ms total=[0-9.]+ms( profile=.+)?")
count = collections.Counter()
for line in open(sys.argv[1]).read().split("\n")[:-1]:
    g = pat.fullmatch(line)
    assert g, "not one whole line: %r" % line
    count[(g[1], g[3])] += 1
assert sorted(r or "-" for _, r in count) == ["-", "0", "1", "2"], count
assert all(n == want for n in count.values()), count
PY

# TANDEM_LOG=stderr; no TANDEM_LOG; a file that cannot be opened.
TANDEM_STRATEGY=cpu TANDEM_LOG=stderr PMI_RANK=7 "$program" 2> "$work/err" &&
  [ "$(grep -c "^tandem pid=[0-9]* rank=7: [sd]gemm m=100 n=60 k=30" "$work/err")" = 3 ] &&
  ok "TANDEM_LOG=stderr: tagged lines on stderr" || bad "TANDEM_LOG=stderr: $(cat "$work/err")"
TANDEM_STRATEGY=cpu "$program" 2> "$work/err" &&
  [ "$(grep -c "^tandem: [sd]gemm m=100 n=60 k=30" "$work/err")" = 3 ] &&
  ok "no TANDEM_LOG: lines on stderr as before" || bad "no TANDEM_LOG: $(cat "$work/err")"
TANDEM_STRATEGY=cpu TANDEM_LOG=$work/no/such/dir/log "$program" 2> "$work/err" &&
  grep -q "warning: cannot open TANDEM_LOG=$work/no/such/dir/log" "$work/err" &&
  [ "$(grep -c "^tandem pid=[0-9]*: [sd]gemm" "$work/err")" = 3 ] &&
  ok "an unwritable TANDEM_LOG: warned, stderr instead" || bad "unwritable TANDEM_LOG: $(cat "$work/err")"

# A value with a newline and an escape sequence cannot forge a line: escaped in its one warning.
TANDEM_STRATEGY=$'cpu\ntandem pid=1: warning: forged\e[2J' TANDEM_LOG=$work/forged.log "$program" 2> "$work/err" &&
  [ "$(grep -c . "$work/forged.log")" -eq 4 ] && ! grep -q "^tandem pid=1:" "$work/forged.log" &&
  grep -q "TANDEM_STRATEGY='cpu\\\\ntandem pid=1: warning: forged\\\\x1b\[2J'" "$work/forged.log" &&
  ! grep -q $'\e' "$work/forged.log" && ok "control characters in a value are escaped" ||
  bad "control characters: $(cat -A "$work/forged.log")"

finish
