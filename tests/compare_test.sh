#!/usr/bin/env bash
# `tandem compare` on the default device with tiny sizes: its CSV, JSON and SVG parse back, every
# strategy and precision is present for every size, numbers are finite, errors small; speedups
# are judged against the runs' spread (with 2 repetitions none is a gain; a row that ran what the
# baseline ran is marked so); the plot is lines for several sizes and bars for one, checked in the
# PNG librsvg renders (plot_check.py); and the README's conventions: options checked before any
# work (exit 2, no quick tune), the files in ./tandem-compare.* unless named, and where they went
# said; --json is JSON on stdout; the quick tune shows its progress.
#
#   compare_test.sh TANDEM
set -eu
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
fail() { echo "FAILED: $*"; exit 1; }

# A wrong option stops compare at once, before the quick tune this empty profile directory would
# start: exit 2, a message, nothing tuned or saved, no file written.
mkdir "$work/rejected" && cd "$work/rejected"
for args in "--strategies cpu,fast" "--strategies cpu,gpu:" "--sizes 0" "--sizes 64:32:x2" \
  "--shape blob" "--reps 0" "--batch 0" "--batch 1000000000000 --sizes 1024" \
  "--out-csv $work/no/such/dir/c.csv"; do
  start=$SECONDS
  rc=0
  "$tandem" compare $args > "$work/out.txt" 2> "$work/err.txt" || rc=$?
  [ $rc -eq 2 ] || fail "compare $args: exit $rc, not 2: $(cat "$work/err.txt")"
  [ -s "$work/err.txt" ] || fail "compare $args: no message"
  grep -q "quick tune" "$work/err.txt" && fail "compare $args: tuned before rejecting it"
  [ $((SECONDS - start)) -le 10 ] || fail "compare $args: took $((SECONDS - start)) s to reject"
  echo "ok: compare $args: exit 2 at once: $(head -1 "$work/err.txt")"
done
[ -z "$(ls -A "$TANDEM_PROFILE_DIR")" ] || fail "a rejected compare saved a profile"
[ -z "$(ls -A "$work/rejected")" ] || fail "a rejected compare wrote files: $(ls "$work/rejected")"

# No profile tuned for this device (PoCL's built-in one is a platform fallback): compare tunes
# quickly first, then compares (the README's main job). No file named: ./tandem-compare.*.
mkdir "$work/run" && cd "$work/run"
"$tandem" compare --sizes 32,48 --shape square --reps 2 > "$work/out.txt" 2> "$work/err.txt"
cat "$work/out.txt"
grep -q "quick tune" "$work/err.txt" || fail "no quick tune without a profile"
# The tune's own progress display, a line per measurement off a terminal (a terminal showed
# nothing for the whole minute).
grep -q "^tune: sgemm kernels [0-9]*/[0-9]* best" "$work/err.txt" || fail "the quick tune showed no progress"
ls "$TANDEM_PROFILE_DIR"/*.json > /dev/null || fail "the quick tune saved no profile"
for f in csv json svg; do
  [ -s "tandem-compare.$f" ] || fail "compare wrote no ./tandem-compare.$f"
  grep -q "wrote .*$work/run/tandem-compare.$f" "$work/out.txt" || fail "compare did not say where tandem-compare.$f went"
  mv "tandem-compare.$f" "$work/c.$f"
done
# A second shape kind, reusing the profile (no tune this time); --json: JSON alone on stdout,
# the table on stderr, and a file named "" is not written.
"$tandem" compare --sizes 64 --shape tall --precision d --strategies cpu,hybrid --reps 1 --json \
  --out-csv "$work/t.csv" --out-json "" --out-plot "" > "$work/t.json" 2> "$work/err2.txt"
grep -q "quick tune" "$work/err2.txt" && fail "tuned again although a profile exists"
grep -q "hybrid" "$work/err2.txt" || fail "compare --json: no table on stderr"
[ -z "$(ls -A "$work/run")" ] || fail "files named \"\" were written: $(ls "$work/run")"
# Device sets as strategies, on PoCL showing two devices: each device alone, both, and all of
# them with the CPU ("gpu:0,1" is one strategy: the number after it continues its device list).
POCL_DEVICES="basic pthread" "$tandem" compare --no-tune --sizes 48 --precision s --reps 1 \
  --strategies cpu,gpu:0,gpu:1,gpu:0,1,all,dynamic:all --out-csv "$work/sets.csv" --out-json "" \
  --out-plot "$work/sets.svg" > /dev/null 2> "$work/err3.txt"
# The plots: lines for sizes 32 and 48, bars for 48 alone, each rendered to PNG and checked.
check_plot="/usr/bin/python3 $(dirname "${BASH_SOURCE[0]}")/plot_check.py"
$check_plot "$work/c.svg" "$work/c.png" --kind lines --colours 1f77b4,d62728,2ca02c,9467bd \
  --labels "sgemm cpu|dgemm auto|GFLOPS|size: cube root of m·n·k (logarithmic)"
# Device sets each get a colour of their own (two shared one when it came from a hash).
$check_plot "$work/sets.svg" "$work/sets.png" --kind bars \
  --colours 1f77b4,ff7f0e,8c564b,e377c2,17becf,bcbd22 \
  --labels "cpu|gpu:0|gpu:1|gpu:0,1|all|dynamic:all|sgemm 48³"
/usr/bin/python3 - "$work" <<'PY'
import csv, json, math, sys
work = sys.argv[1]
rows = list(csv.DictReader(open(f"{work}/c.csv")))
data = json.load(open(f"{work}/c.json"))
assert len(rows) == len(data["rows"]) == 2 * 2 * 4, (len(rows), len(data["rows"]))
seen = set()
for r in rows:
    seen.add((r["precision"], r["m"], r["strategy"]))
    for key in ("gflops", "gflops_min", "gflops_max", "seconds", "max_error"):
        v = float(r[key])
        assert math.isfinite(v) and v >= 0, (key, r)
    assert float(r["gflops"]) > 0, r
    assert float(r["gflops_min"]) <= float(r["gflops"]) <= float(r["gflops_max"]), r
    limit = 1e-5 if r["precision"] == "s" else 1e-12
    assert float(r["max_error"]) < limit, r
    assert int(r["gpu_rows"]) + int(r["cpu_rows"]) == int(r["m"]), r
    assert r["fell_back"] == "0", r
for p in "sd":
    for m in ("32", "48"):
        for s in ("cpu", "gpu", "hybrid", "auto"):
            assert (p, m, s) in seen, (p, m, s)
assert isinstance(data["power_readable"], bool) and data["power_sources"], data.keys()
tall = list(csv.DictReader(open(f"{work}/t.csv")))
assert [(r["m"], r["n"], r["k"]) for r in tall] == [("256", "16", "64")] * 2, tall
tall_json = json.load(open(f"{work}/t.json"))  # compare --json's standard output
assert [r["strategy"] for r in tall_json["rows"]] == ["cpu", "hybrid"], tall_json
# Speedups with 2 repetitions: none is called a gain. Each shape's baseline is the faster single
# device; a row that ran its configuration is "same config" whatever the ratio, one whose range
# overlaps it "within noise", the rest "untested"; the raw ratio stays in "speedup".
table = [l.split() for l in open(f"{work}/out.txt") if l.startswith(("sgemm", "dgemm"))]
assert len(table) == len(rows), (len(table), len(rows))
for r, line in zip(data["rows"], table):
    assert len(r["gflops_samples"]) == 2 and r["speedup"] > 0, r
    assert not r["speedup_significant"], r
    group = [b for b in data["rows"] if (b["precision"], b["m"]) == (r["precision"], r["m"])]
    base = [b for b in group if b["speedup_note"] == "the baseline"]
    assert len(base) == 1 and base[0]["strategy"] in ("cpu", "gpu"), group
    base = base[0]
    assert r["speedup_over"] == base["strategy"], r
    apart = min(r["gflops_samples"]) > max(base["gflops_samples"]) or \
        max(r["gflops_samples"]) < min(base["gflops_samples"])
    text = " ".join(line)
    if r is base:
        assert "(baseline)" in text, text
    elif r["configuration"] == base["configuration"]:
        assert "~1.0x (same config)" in text, (text, r)
    elif not apart:
        assert "~1.0x (within noise)" in text, (text, r)
    else:
        assert "(untested)" in text and "too few" in r["speedup_note"], (text, r)
sets = list(csv.DictReader(open(f"{work}/sets.csv")))
assert [r["strategy"] for r in sets] == ["cpu", "gpu:0", "gpu:1", "gpu:0,1", "all", "dynamic:all"], sets
for r in sets:
    assert float(r["max_error"]) < 1e-5 and r["fell_back"] == "0", r
    assert int(r["gpu_rows"]) + int(r["cpu_rows"]) == 48, r
assert [r["ran"] for r in sets[:4]] == ["cpu", "gpu", "gpu", "gpu"], sets
assert float(sets[3]["speedup"]) > 0, sets[3]  # against the faster of cpu and one device alone
print("compare: CSV, JSON and SVG parse back;", len(rows), "rows, every strategy present")
PY
