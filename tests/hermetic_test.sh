#!/usr/bin/env bash
# Proof that the tests are hermetic: a poisonous profile for this very machine sits in the user's
# cache (and in an exported TANDEM_PROFILE_DIR), one that changes what a call does; a test that
# would see it still passes, because every test process gets an empty profile directory of its own.
#
#   hermetic_test.sh TANDEM_CLI ENV_TEST
set -euo pipefail
tandem=$1
env_test=$2
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cache=$fake/.cache/tandem

# A real profile for this machine, from a tune of a second or two, with every dgemm kernel made to
# read A and B transposed: the calls below then copy both instead of using them in place.
TANDEM_PROFILE_DIR=$cache "$tandem" tune --precision d --sizes 64 --budget-evals 1 --kernel-size 64 \
  --reps 1 --top-kernels 1 --small-space >/dev/null 2>&1
profile=$(ls "$cache"/*.json)
python3 - "$profile" <<'PY'
import json, sys
path = sys.argv[1]
p = json.load(open(path))
d = p["precisions"]["d"]
for kernel in [d["gpu_kernel"]] + [b["kernel"] for b in d["buckets"]] + [b.get("gpu_kernel", {}) for b in d["buckets"]]:
    kernel.update({"A_T": 1, "B_T": 1})
json.dump(p, open(path, "w"), indent=2)
PY

# The poison works: a call that reads the cache copies A and B.
export TANDEM_VERBOSE=1 TANDEM_STRATEGY=hybrid TANDEM_GPU_FRACTION=0.5
line=$(HOME=$fake XDG_CACHE_HOME= "$tandem" gemm --m 100 --n 70 --k 50 --precision d --strategy hybrid \
  --fraction 0.5 2>&1 >/dev/null | grep -m 1 'dgemm m=100' || true)
case "$line" in
  *"A=copy B=copy"*) echo "the poisoned profile takes effect outside the tests: $line" ;;
  *) echo "FAILED: the poisoned profile did not change the call, so this proves nothing: $line"; exit 1 ;;
esac

# The test that expects A, B and C in place passes with the poison in the user's cache, and with
# it in a TANDEM_PROFILE_DIR the caller exported.
HOME=$fake XDG_CACHE_HOME= "$env_test" --gtest_filter='EnvVerbose.*'
HOME=$fake TANDEM_PROFILE_DIR=$cache "$env_test" --gtest_filter='EnvVerbose.*'
echo "hermetic: the tests did not see the poisoned profile"
