#!/usr/bin/env bash
# Fuzzes one libFuzzer target for a bounded time from its seed corpus, hermetically: the corpus it
# grows, its profile directory and its temporary files are in a fresh directory, removed at the
# end; the seeds in tests/fuzz/corpus/ are only read. A crash, a leak, a sanitizer report, a
# timeout on one input or a broken property (fuzz_check.hpp) fails the run, and the input that
# did it is kept beside the target as crash-*, leak-* or timeout-* to reproduce with
# `TARGET FILE`.
# Usage: run.sh TARGET SEED_CORPUS SECONDS [no-leaks]
# no-leaks: LeakSanitizer off for this target (batch_fuzz: its inputs reach kernel variants
# whose first build by PoCL's compiler keeps memory LeakSanitizer reports, and no cache warmed
# beforehand holds every variant a run may find, as a CI run showed on 2026-11-26 after 74,000
# inputs; the batch path's own leaks are the address job's batch_test's to find).
set -uo pipefail
target=$1
seeds=$2
seconds=$3
leaks=()
if [ "${4:-}" = no-leaks ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  leaks=(-detect_leaks=0)
fi
source "$(dirname "$0")/../hermetic.sh"
mkdir "$work/corpus"
artifacts=$(dirname "$target")/$(basename "$target")-findings/
mkdir -p "$artifacts"
# -timeout: one input taking 30 s is a hang. -rss_limit_mb: libFuzzer's default, said here.
# The seeds run first (all of them, every time): a regression on a seed fails at once.
"$target" ${leaks[@]+"${leaks[@]}"} -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts" "$work/corpus" "$seeds" >"$artifacts/last-run.log" 2>&1
status=$?
tail -n 60 "$artifacts/last-run.log"
if [ "$status" -ne 0 ]; then
  echo "FAILED: $(basename "$target") exited $status; the input is in $artifacts"
  ls -l "$artifacts"
  exit 1
fi
echo "ok: $(basename "$target") ran $seconds s from $(ls "$seeds" | wc -l) seeds, nothing found"
