// `tandem tune`: the co-tuner from the command line, with a progress line while it runs (which
// compare's quick tune shows too) and the profile it made at the end.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli.hpp"
#include "cotuner.hpp"
#include "profile/defaults.hpp"
#include "search.hpp"

namespace tandem::cli {
namespace {

using nlohmann::json;

struct TuneArgs {
  tuner::TuneOptions options;
  std::string precision = "both", log;
  std::vector<std::string> start, start_d;
  bool no_save = false;
};

// Seconds as mm:ss.
std::string clock_text(double s) {
  char buf[32];
  const int t = static_cast<int>(std::max(0.0, s));
  std::snprintf(buf, sizeof buf, "%02d:%02d", t / 60, t % 60);
  return buf;
}

}  // namespace

void print_tune_progress(const tuner::Progress& p, bool tty) {
  const auto gemm = detail::routine_name(p.precision, "gemm");
  if (tty && p.keep_line)
    std::fprintf(stderr, "\r\033[Ktune: %s %s: %s\n", gemm.c_str(), p.phase.c_str(),
                 p.last.c_str());
  if (tty) {
    const int width = 24, filled = p.budget > 0 ? std::min(width, width * p.done / p.budget) : 0;
    std::fprintf(stderr, "\r\033[K%s %-7s [%s%s] %d/%d  best %.1f GFLOPS  %s elapsed  ~%s left",
                 gemm.c_str(), p.phase.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), p.done, p.budget, p.best_gflops,
                 clock_text(p.elapsed).c_str(), clock_text(p.remaining).c_str());
  } else {
    std::fprintf(stderr, "tune: %s %s %d/%d best %.1f GFLOPS, %s elapsed: %s\n", gemm.c_str(),
                 p.phase.c_str(), p.done, p.budget, p.best_gflops, clock_text(p.elapsed).c_str(),
                 p.last.c_str());
  }
  std::fflush(stderr);
}

namespace {

void print_report(const tuner::TuneReport& report, bool as_json) {
  if (as_json) {
    json j = profile_json(report.profile);
    j["saved"] = report.saved.string();
    j["log"] = report.log.string();
    for (const auto& s : report.precisions)
      j["summary"].push_back({{"precision", std::string(1, detail::letter(s.precision))},
                              {"evaluations", s.evaluations},
                              {"failures", s.failures},
                              {"resumed", s.resumed},
                              {"model_failure", s.model_failure},
                              {"small_evaluations", s.small_evaluations},
                              {"direct_evaluations", s.direct_evaluations},
                              {"engine_evaluations", s.engine_evaluations},
                              {"direct_failures", s.direct_failures},
                              {"direct_verdicts", s.direct_verdicts},
                              {"batch_failure", s.batch_failure},
                              {"coalesced_evaluations", s.coalesced_evaluations},
                              {"failure_reasons", s.failure_reasons}});
    std::cout << j.dump(2) << "\n";
    return;
  }
  for (const auto& s : report.precisions) {
    std::printf("%s: %d kernel candidates measured (%d resumed from the log), %d excluded\n",
                detail::routine_name(s.precision, "gemm").c_str(), s.evaluations, s.resumed,
                s.failures);
    if (s.small_evaluations > 0)
      std::printf("  small tiles: %d candidates measured\n", s.small_evaluations);
    if (!s.model_failure.empty()) std::printf("  no cost model: %s\n", s.model_failure.c_str());
    if (s.engine_evaluations > 0)
      std::printf("  matrix-engine codelet: %d candidates\n", s.engine_evaluations);
    if (s.direct_evaluations > 0)
      std::printf("  direct kernel: %d candidates, %d excluded\n", s.direct_evaluations,
                  s.direct_failures);
    for (const auto& [size, winner] : s.direct_verdicts)
      std::printf("  at %lld^3 the faster: %s\n", static_cast<long long>(size), winner.c_str());
    for (const auto& r : s.failure_reasons) std::printf("  excluded: %s\n", r.c_str());
    if (s.coalesced_evaluations > 0)
      std::printf("  coalesced kernel: %d candidates over %zu buckets\n", s.coalesced_evaluations,
                  s.coalesced.size());
    if (!s.batch_points.empty())
      std::printf("  batches: %zu sizes measured (the profile below says what they gave)\n",
                  s.batch_points.size());
    if (!s.batch_failure.empty()) std::printf("  batches: %s\n", s.batch_failure.c_str());
  }
  print_profile(report.profile);
  std::printf("log: %s\n", report.log.string().c_str());
}

// What no single option's check can see: options that contradict each other, found before the
// device is opened (the tuner checks them too, for callers of the library, but only after).
void check_options(const TuneArgs& a) {
  const tuner::TuneOptions& o = a.options;
  const auto text = [](int v) { return std::to_string(v); };
  if (o.split_max < -1 || o.split_max > o.parts)
    throw UsageError("tune: --split-max " + text(o.split_max) + " must be -1 (P) or from 0 to " +
                     "--parts (" + text(o.parts) + ")");
  const int top = o.split_max < 0 ? o.parts : o.split_max;
  if (o.split_min > top)
    throw UsageError("tune: --split-min " + text(o.split_min) + " is above --split-max (" +
                     text(top) + ")");
  if (o.model_only && !o.model) throw UsageError("tune: --model-only contradicts --no-model");
  if (o.direct_only && !o.direct) throw UsageError("tune: --direct-only contradicts --no-direct");
  if (int(o.model_only) + int(o.direct_only) + int(o.batch_only) > 1)
    throw UsageError(
        "tune: --model-only, --direct-only and --batch-only each tune one thing "
        "alone: name one");
  if (o.batch_only && !o.batch) throw UsageError("tune: --batch-only contradicts --no-batch");
  const int64_t least_batch = detail::profile::batch_tune().sizes.front();
  for (int64_t s : o.batch_sizes)
    if (s < least_batch)
      throw UsageError("tune: --batch-sizes " + std::to_string(s) + " is below " +
                       std::to_string(least_batch) + ", the smallest product auto deals");
  if (o.small_evaluations < -1)
    throw UsageError("tune: --small-evals " + text(o.small_evaluations) + " must be -1 or more");
  if (o.compile_jobs < -1)
    throw UsageError("tune: --compile-jobs " + text(o.compile_jobs) + " must be -1 or more");
}

int tune(const TuneArgs& a, bool as_json) {
  check_options(a);
  tuner::TuneOptions o = a.options;
  o.log = a.log;
  o.start = parse_assignments(a.start, "--start");
  o.start_d = parse_assignments(a.start_d, "--start-d");
  o.save = !a.no_save;
  o.precisions = parse_precisions(a.precision);
  const bool tty = isatty(STDERR_FILENO) != 0;
  o.on_progress = [tty](const tuner::Progress& p) { print_tune_progress(p, tty); };
  const auto report = tuner::tune(o);
  if (tty) std::fprintf(stderr, "\n");
  print_report(report, as_json);
  return 0;
}

// The phases after the split search, each of which can be left out or run alone for the profile
// that applies now: the cost model, the direct kernel and its threshold, the batch rule.
void add_phase_options(CLI::App& tune, tuner::TuneOptions& o) {
  CLI::App* sub = &tune;
  sub->add_flag("!--no-model", o.model, "do not fit the cost model for untuned shapes");
  sub->add_flag("--model-only", o.model_only,
                "fit the cost model alone, for the profile that applies now (local or built-in)");
  sub->add_flag("!--no-direct", o.direct, "do not tune the direct kernel for small and odd calls");
  sub->add_flag("--direct-only", o.direct_only,
                "tune the direct kernel and its threshold alone, for the profile that applies now "
                "(bounded by --direct-seconds per precision)");
  sub->add_option("--direct-size", o.direct_size, "size at which direct kernels are compared")
      ->check(kPositive)
      ->default_str("512, or the kernel size if smaller");
  sub->add_option("--direct-sizes", o.direct_sizes,
                  "sizes at which the direct kernel meets the profile's own, until it loses")
      ->delimiter(',')
      ->check(kPositive)
      ->default_str("256 (or the smallest size) doubling to four times the largest size");
  sub->add_option("--direct-evals", o.direct_evaluations,
                  "direct kernel candidates to measure, per precision")
      ->check(kPositive)
      ->default_str("half of --budget-evals");
  sub->add_option("--direct-seconds", o.direct_seconds,
                  "time for the direct kernel's search and threshold, per precision")
      ->check(kPositive);
  sub->add_flag("!--no-batch", o.batch,
                "do not measure where auto deals a batch's products to the devices");
  sub->add_flag("--batch-only", o.batch_only,
                "measure the batch rule alone, for the profile that applies now (bounded by "
                "--batch-seconds per precision)");
  sub->add_option("--batch-sizes", o.batch_sizes,
                  "product sizes at which batches are measured: the coalesced kernel's buckets, "
                  "and the rule from the largest down until dealing stops paying")
      ->delimiter(',')
      ->check(kPositive)
      ->default_str(
          "database/defaults.json's batch.kernel_sizes (64 to 1024) and tune_sizes (32 to 512; "
          "32 at least)");
  sub->add_option("--batch-seconds", o.batch_seconds,
                  "time for the batch phase (the coalesced kernel's search, then the batch rule), "
                  "per precision")
      ->check(kPositive);
  sub->add_option("--batch-kernel-evals", o.batch_kernel_evaluations,
                  "coalesced kernel candidates to measure per bucket of size and count (0: none, "
                  "batches keep the direct kernel)")
      ->check(CLI::NonNegativeNumber);
}

}  // namespace

Subcommand add_tune(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  tuner::TuneOptions& o = args->options;
  auto* sub =
      app.add_subcommand("tune", "co-tune the GPU kernel and the CPU/GPU split; save the profile");
  sub->add_option("--precision", args->precision, "s, d, c, z, both (s and d) or all")
      ->check(kPrecisions);
  sub->add_option("--strategy", o.strategy, "search strategy")
      ->check(CLI::IsMember(tuner::strategy_names()));
  sub->add_option("--budget-evals", o.budget_evaluations,
                  "kernel candidates to measure, per precision")
      ->check(kPositive);
  sub->add_option("--budget-seconds", o.budget_seconds, "wall-time budget")->check(kPositive);
  sub->add_option("--sizes", o.sizes, "size buckets (m = n = k)")
      ->delimiter(',')
      ->check(kPositive)
      ->default_str("by the device's speed, per precision");
  sub->add_option("--kernel-size", o.kernel_size,
                  "size at which kernels are compared (0: the middle size)")
      ->check(kNonNegative);
  sub->add_option("--device", o.device, "device index or name");
  sub->add_option("--reps", o.reps, "timed repetitions per configuration")->check(kPositive);
  sub->add_option("--parts", o.parts, "P, the split's granularity")->check(CLI::Range(2, 1024));
  sub->add_option("--split-min", o.split_min, "the smallest p_g the split search tries")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--split-max", o.split_max, "the largest p_g the split search tries (P: -1)");
  sub->add_option("--top-kernels", o.top_kernels, "kernels whose split is searched")
      ->check(kPositive);
  sub->add_option("--split-margin", o.split_margin,
                  "how much faster a split must be than the better single strategy (0.05: 5%)")
      ->check(kFraction);
  sub->add_option("--small-evals", o.small_evaluations,
                  "small-tile kernels measured at each bucket too small for phase 1's best "
                  "(-1: --budget-evals on a GPU, 0 on a CPU device)");
  sub->add_option("--small-seconds", o.small_seconds,
                  "seconds for a precision's small-tile searches, at most")
      ->check(kPositive);
  sub->add_option("--compile-jobs", o.compile_jobs,
                  "programs built ahead in parallel (-1: by device)");
  sub->add_option("--seed", o.seed, "random seed");
  sub->add_option("--objective", o.objective, "minimise time, energy or energy x delay (edp)")
      ->check(CLI::IsMember({"time", "energy", "edp"}));
  sub->add_option("--timeout", o.timeout_seconds,
                  "a call slower than this (seconds) excludes its candidate")
      ->check(kPositive);
  sub->add_option("--log", args->log, "JSON-lines log (resumes from it)")->check(kWritableFile);
  sub->add_flag("--small-space", o.small_space, "the small, enumerable kernel space");
  sub->add_option("--start", args->start, "start point: kernel parameters NAME=VALUE,...")
      ->delimiter(',')
      ->check(kKernelParams)
      ->default_str("the kernel of the profile that applies now, else the device's defaults");
  sub->add_option("--start-d", args->start_d, "dgemm's start point, if not --start's")
      ->delimiter(',')
      ->check(kKernelParams)
      ->default_str("");
  sub->add_flag("--no-save", args->no_save, "do not write the profile");
  add_phase_options(*sub, o);
  return {sub, [args](bool as_json) { return tune(*args, as_json); }};
}

}  // namespace tandem::cli
