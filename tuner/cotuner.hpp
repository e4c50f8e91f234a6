// The co-tuner: searches the GPU kernel's parameters, then, for the best kernels, the split p_g/P
// of C's rows between that kernel and the CPU BLAS, at several sizes, and writes the result as
// the device's profile. The objective is the wall time of the whole call with operands in
// ordinary host memory (transfers included), which is what a drop-in call pays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "power.hpp"
#include "profile/profile.hpp"

namespace tandem::tuner {

struct Progress {
  std::string phase;  // "kernels", "small", "split", "confirm", "direct" or "batch"
  detail::Precision precision = detail::Precision::s;
  int done = 0, budget = 0;
  double best_gflops = 0;
  double elapsed = 0, remaining = 0;  // seconds; remaining is an estimate
  std::string last;                   // what was just measured, and how it went
  // A verdict worth a line of its own on a terminal too (a bucket's confirmation: whether the
  // machine was too noisy to decide), where the rest redraw one line.
  bool keep_line = false;
};

struct TuneOptions {
  std::string device;  // selector ("" default device)
  std::vector<detail::Precision> precisions{detail::Precision::s, detail::Precision::d};
  std::string strategy = "phased";
  // What to minimise: "time" (the call's wall time), "energy" (joules per call) or "edp"
  // (energy times delay). The last two need a readable power source.
  std::string objective = "time";
  power::Config power_config;
  double energy_seconds = 0.5;  // energy is read over at least this long per candidate
  int budget_evaluations = 40;  // kernel candidates measured, per precision
  double budget_seconds = 900;  // the whole run
  // The size buckets (m = n = k). None: by the device's speed, per precision (bucket_sizes at
  // the rate of the profile that applies now), so a fast GPU compares kernels at sizes where
  // they, not launches and copies, set the time.
  std::vector<int64_t> sizes;
  int64_t kernel_size = 0;   // where kernels are compared (0: the middle size)
  int warmup = 1, reps = 5;  // 5: enough samples for the bimodality flag
  int parts = 64;            // P
  // The range of p_g the split search looks in (-1: up to P): 1 to P - 1 keeps rows on both
  // sides, however a side alone compares.
  int split_min = 0, split_max = -1;
  int top_kernels = 2;  // kernels whose split is searched
  // A split is chosen over the better single strategy only when it is this much faster (0.05:
  // 5%): on the H100 host, hybrid gains of 0.6 to 4% measured while tuning did not repeat in a
  // later side-by-side run, where those splits ran 8% and 28% slower (docs/PERFORMANCE.md).
  double split_margin = 0.05;
  int compile_jobs = -1;        // programs built ahead in parallel; -1: 3 on a GPU,
                                // 0 on a CPU device (builds would disturb timings)
  double timeout_seconds = 20;  // a single call slower than this is excluded
  bool small_space = false;     // the enumerable subspace (for comparing strategies)
  // Kernel parameters of the start point, over the device's defaults (ignored if it is not in
  // the space). None: the GPU kernel of the profile that applies now (an architecture's entry,
  // say), so a tune never ends on a kernel slower at its kernel size than the one it replaces.
  std::map<std::string, int> start;
  std::map<std::string, int> start_d;  // the same for dgemm, if given (else `start`)
  uint64_t seed = 1;
  std::filesystem::path log;  // JSON-lines log; "" : next to the profile
  bool save = true;           // write the profile to the profile directory
  // Fit the cost model (src/model/cost_model.hpp) after the buckets; `model_only`: fit it alone,
  // for the kernels and buckets of the profile that applies now (local or built-in), and save that
  // profile with the model as a local one.
  bool model = true, model_only = false;
  // The direct kernel (kernels/gemm_direct.cl) after the buckets and the model: its own space
  // searched at `direct_size` (0: twice defaults.json's smallest tune size, or the kernel size
  // if smaller) within `direct_evaluations` and `direct_seconds` (taken from the precision's
  // share of the budget), then the size below which it beats the profile's own kernels: at each
  // of `direct_sizes` in turn (none: from that smallest size, or the smallest bucket if smaller,
  // doubling up to four times the largest bucket), GPU alone from ordinary memory, until it
  // loses. `direct_only`: that alone, for the profile that applies now, saved as a local one.
  bool direct = true, direct_only = false;
  int64_t direct_size = 0;
  std::vector<int64_t> direct_sizes;
  int direct_evaluations = 0;  // 0: half of budget_evaluations
  double direct_seconds = 120;
  // The batch rule (tuner/cotuner_batch.cpp), after the direct kernel: the size from which auto
  // deals a batch's products to the devices rather than keep them on the cores, measured at each
  // of `batch_sizes` (none: database/defaults.json's batch.tune_sizes) from the largest down, for
  // operands in ordinary memory and, on a discrete device, in tandem_malloc memory, within
  // `batch_seconds` of the precision's share; each batch as many products as the cores take
  // `batch_call_seconds` over (0: defaults.json's batch.tune_call_seconds). `batch_only`: that
  // alone, for the profile that applies now, saved as a local one.
  bool batch = true, batch_only = false;
  std::vector<int64_t> batch_sizes;
  double batch_seconds = 120, batch_call_seconds = 0;
  // The batch phase first searches the coalesced kernel's own parameters (tuner/
  // cotuner_coalesced.cpp) at each of `batch_sizes` (none: defaults.json's batch.kernel_sizes),
  // `batch_kernel_evaluations` candidates a bucket (0: none, batches keep the direct kernel),
  // within half of `batch_seconds`.
  int batch_kernel_evaluations = 16;
  // Kernels of its own for each bucket whose calls give phase 1's best kernel fewer work-groups
  // than two waves of the device: the small-tile space (tuner/gemm_space.hpp) searched at the
  // bucket's size within `small_evaluations` each (-1: budget_evaluations on a GPU, 0 on a CPU
  // device); all of a precision's such searches within `small_seconds`, and at most a third of
  // what the precision has left after phase 1. Its best joins the bucket's split search, first.
  int small_evaluations = -1;
  double small_seconds = 180;
  std::function<void(const Progress&)> on_progress;
  // Testing hook: called on C after each measured call that gave the GPU rows, e.g. to play a
  // wrong kernel; `split` says whether the CPU had rows too.
  std::function<void(void* c, int64_t elements, detail::Precision precision, bool split)> tamper;
};

struct PrecisionSummary {
  detail::Precision precision = detail::Precision::s;
  int evaluations = 0, failures = 0, resumed = 0;
  std::vector<std::string> failure_reasons;  // "params: reason", the first few
  double best_gpu_gflops = 0;
  std::string model_failure;  // why no cost model was fitted ("" if one was, or none was asked)
  int small_evaluations = 0;  // the small-tile searches' candidates measured (resumed: above)
  int direct_evaluations = 0, direct_failures = 0;  // the direct kernel's search
  int engine_evaluations = 0;  // the matrix-engine codelet's candidates (0: not offered here)
  std::vector<std::pair<int64_t, std::string>> direct_verdicts;  // per size: which kernel won
  // The batch phase's measurements in the order taken (ordinary memory, then tandem_malloc
  // memory where measured), and why it measured nothing or stopped early ("" where it did not).
  std::vector<std::pair<bool, detail::profile::BatchPoint>> batch_points;  // (resident, point)
  std::string batch_failure;
  // The coalesced kernel's buckets as the search left them (the profile's), and its candidates
  // measured (resumed ones included).
  std::vector<detail::profile::CoalescedBucket> coalesced;
  int coalesced_evaluations = 0;
};

struct TuneReport {
  detail::profile::Profile profile;
  std::filesystem::path saved;  // where the profile was written ("" if not)
  std::filesystem::path log;
  std::vector<PrecisionSummary> precisions;
  double seconds = 0;
};

// The size buckets for a device that runs m = n = k GEMMs at `gflops`, with `memory_bytes` of
// memory and operands of `element_bytes` (the rule and its numbers: TuneSizes, defaults.json's
// "tune"); ascending.
std::vector<int64_t> bucket_sizes(double gflops, uint64_t memory_bytes, size_t element_bytes);

// The batch rule that the batch phase's points give (tuner/cotuner_batch.cpp): the edge from the
// smallest size from which the devices (dealt or alone: a point's side other than the cores) won
// at every larger size measured; where the cores kept the size just below it, the geometric
// middle of the two sizes; half a doubling above the largest where the devices ran there but did
// not win; 0 (never) where both device sides failed there (hybrid and devices-alone GFLOPS 0) or
// nothing was measured. The points come back ascending by size.
detail::profile::BatchRule batch_rule_from(std::vector<detail::profile::BatchPoint> points);

// Throws tandem::Error when the device cannot be opened, std::invalid_argument for bad options.
TuneReport tune(const TuneOptions& options);

}  // namespace tandem::tuner
