#!/usr/bin/env bash
# `tandem compare` on the default device with tiny sizes: its CSV, JSON and SVG parse back, every
# strategy and precision is present for every size, numbers are finite, errors small.
#
#   compare_test.sh TANDEM
set -eu
tandem=$(readlink -f "$1")
source "$(dirname "${BASH_SOURCE[0]}")/hermetic.sh"  # $work, TANDEM_PROFILE_DIR, TMPDIR
# No profile tuned for this device (PoCL's built-in one is a platform fallback): compare tunes
# quickly first, then compares (the README's main job).
"$tandem" compare --sizes 32,48 --shape square --reps 2 --csv "$work/c.csv" --json "$work/c.json" \
  --plot "$work/c.svg" > "$work/out.txt" 2> "$work/err.txt"
cat "$work/out.txt"
grep -q "quick tune" "$work/err.txt" || { echo "FAILED: no quick tune without a profile"; exit 1; }
ls "$TANDEM_PROFILE_DIR"/*.json > /dev/null || { echo "FAILED: the quick tune saved no profile"; exit 1; }
# A second shape kind, reusing the profile (no tune this time).
"$tandem" compare --sizes 64 --shape tall --precision d --strategies cpu,hybrid --reps 1 --csv "$work/t.csv" \
  > /dev/null 2> "$work/err2.txt"
grep -q "quick tune" "$work/err2.txt" && { echo "FAILED: tuned again although a profile exists"; exit 1; }
# Device sets as strategies, on PoCL showing two devices: each device alone, both, and all of
# them with the CPU ("gpu:0,1" is one strategy: the number after it continues its device list).
POCL_DEVICES="basic pthread" "$tandem" compare --no-tune --sizes 48 --precision s --reps 1 \
  --strategies cpu,gpu:0,gpu:1,gpu:0,1,all,dynamic:all --csv "$work/sets.csv" > /dev/null 2> "$work/err3.txt"
if "$tandem" compare --no-tune --sizes 32 --strategies cpu,gpu: > /dev/null 2>&1; then
  echo "FAILED: a strategy naming no device was accepted"; exit 1
fi
/usr/bin/python3 - "$work" <<'PY'
import csv, json, math, sys, xml.etree.ElementTree as ET
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
svg = ET.parse(f"{work}/c.svg").getroot()
assert svg.tag.endswith("svg"), svg.tag
lines = [e for e in svg.iter() if e.tag.endswith("polyline")]
assert len(lines) == 8, len(lines)  # one per strategy and precision
sets = list(csv.DictReader(open(f"{work}/sets.csv")))
assert [r["strategy"] for r in sets] == ["cpu", "gpu:0", "gpu:1", "gpu:0,1", "all", "dynamic:all"], sets
for r in sets:
    assert float(r["max_error"]) < 1e-5 and r["fell_back"] == "0", r
    assert int(r["gpu_rows"]) + int(r["cpu_rows"]) == 48, r
assert [r["ran"] for r in sets[:4]] == ["cpu", "gpu", "gpu", "gpu"], sets
assert float(sets[3]["speedup"]) > 0, sets[3]  # against the faster of cpu and one device alone
print("compare: CSV, JSON and SVG parse back;", len(rows), "rows, every strategy present")
PY
