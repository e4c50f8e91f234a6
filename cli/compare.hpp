// `tandem compare`: CPU-only, GPU-only, hybrid and auto side by side on this machine, per size
// and precision: throughput (median of the repetitions after a warm-up, with min and max), the
// split, each side's time, speedup over the best single device (and whether it stands out of the
// runs' noise), the error against a CPU reference, and, where power can be read, energy, average
// watts and GFLOPS per watt.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/precision.hpp"
#include "power.hpp"
#include "tandem/tandem.hpp"

namespace tandem::tuner {

// One compared strategy: "cpu", "gpu", "hybrid", "dynamic" (hybrid with dynamic balance) or
// "auto", each on the compare's device, or on a device set after a colon ("gpu:1", "gpu:1,2",
// "hybrid:all", "dynamic:all"); "all" is every device and the CPU (hybrid:all).
struct Variant {
  Strategy strategy = Strategy::Auto;
  std::string devices;             // empty: the compare's device
  std::optional<Balance> balance;  // dynamic: Balance::Dynamic
  // Whether it runs on one OpenCL device alone: a single device the speedup compares against.
  bool single_device() const;
};
// Throws std::invalid_argument naming what is wrong.
Variant variant_of(const std::string& name);
// The list as the command line gives it: comma-separated, where a number after a device set
// continues that set ("cpu,gpu:1,2,all" is cpu, gpu:1,2 and all).
std::vector<std::string> split_strategies(const std::string& list);

struct CompareOptions {
  std::vector<detail::Precision> precisions{detail::Precision::s, detail::Precision::d};
  std::vector<std::array<int64_t, 3>> shapes;  // (m, n, k)
  std::vector<std::string> strategies{"cpu", "gpu", "hybrid", "auto"};
  int warmup = 1, reps = 3;
  bool resident = false;  // operands in tandem_malloc memory (in place on unified devices)
  // Above 0: each shape is a strided batch of this many products, one gemm_batch_strided call
  // (its rate counts every product's work; the split counts problems, not rows).
  int64_t batch = 0;
  std::string device;
  bool power = true;
  double idle_seconds = 1.0;    // the idle baseline's length
  double energy_seconds = 1.0;  // energy is read over at least this long (counters are coarse)
  double settle_seconds = 0.3;  // pause before each strategy's turn, for the last one's threads
  power::Config power_config;
  std::function<void(const struct CompareRow&)> on_row;
};

struct CompareRow {
  detail::Precision precision = detail::Precision::s;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 0;     // problems in the batch each call ran (0: a single product)
  std::string strategy;  // as asked
  std::string ran;       // what ran: cpu, gpu or hybrid
  double gflops = 0, gflops_min = 0, gflops_max = 0, seconds = 0;
  std::vector<double> gflops_samples;  // each timed repetition's, in the order they ran
  // What ran, in full: the strategy, each side's rows, the CPU's threads, each device and its
  // kernel. Two rows alike in this ran the same code, whatever they asked for.
  std::string configuration;
  int64_t gpu_rows = 0, cpu_rows = 0;                           // a batch's: problems, not rows
  double cpu_seconds = 0, gpu_seconds = 0, kernel_seconds = 0;  // medians; gpu: enqueue to done
  double kernel_gflops = 0;  // from the kernel's own time (GPU-only)
  double speedup = 0;        // over the faster of cpu and gpu for this shape (0 if not both ran)
  // Whether the speedup stands out of the noise (check_speedup), why not, and the strategy it is
  // measured against.
  enum class Verdict { None, Baseline, Significant, SameConfiguration, Noise, TooFewRuns };
  Verdict speedup_verdict = Verdict::None;
  std::string speedup_note, speedup_over;
  bool speedup_significant() const { return speedup_verdict == Verdict::Significant; }
  double max_error = 0;  // max |C - ref| / max |ref|, ref: the CPU BLAS in double
  std::string buffers;   // A/B/C paths
  bool fell_back = false;
  bool power = false;
  double joules = 0, watts = 0, gflops_per_watt = 0;  // per call, over the timed calls
};

struct CompareResult {
  std::vector<CompareRow> rows;
  std::vector<power::SourceStatus> sources;
  bool power = false;
  power::Measurement idle;       // the idle baseline, measured before anything runs
  double sampling_overhead = 0;  // relative cost of reading power during a run
  std::string overhead_note;
};

// Throws std::invalid_argument for bad options.
CompareResult compare(const CompareOptions& options);

// A speedup and whether the samples behind it tell it from noise: tuner::separate's rule (the one
// the tune's choices follow too) at defaults.json's compare_confidence. It is significant only
// where the two ran different configurations, their min-max ranges do not overlap, and there are
// enough samples: with 3 against 3, two strategies that do not differ still give ranges apart
// one time in 10 (2 of the 20 ways to rank 6 samples), with 2 against 2 one in 3.
struct SpeedupCheck {
  double ratio = 0;  // median over the baseline's median (0 without samples)
  CompareRow::Verdict verdict = CompareRow::Verdict::None;
  std::string note;  // why it is not significant, in words
};
SpeedupCheck check_speedup(const std::vector<double>& rates, const std::vector<double>& baseline,
                           bool same_configuration);
// The repetitions a side needs for a speedup to count (3 at compare's confidence of 0.9).
size_t speedup_min_samples();
// The speedup as the table shows it: "1.84x"; "~1.0x (within noise)"; "~1.0x (same config)";
// "1.84x (untested)" with too few repetitions to tell; "1.00x (baseline)"; "-" where there is none.
std::string speedup_text(const CompareRow& row);

// Square shapes for sizes; "tall" is (4s, s/4, s) and "wide" (s/4, 4s, s): the same work.
std::vector<std::array<int64_t, 3>> shapes_for(const std::string& kind,
                                               const std::vector<int64_t>& sizes);
// "256,512" or "256:4096:x2" (a geometric range).
std::vector<int64_t> parse_sizes(const std::string& text);
// "square", "tall", "wide" or "MxNxK,MxNxK".
std::vector<std::array<int64_t, 3>> parse_shapes(const std::string& text,
                                                 const std::vector<int64_t>& sizes);

std::string to_csv(const CompareResult& r);
// Throughput with min-max error bars: bars for a single size (one group per precision and shape),
// lines against size for several; and a GFLOPS/W panel when power was read
// (compare_plot.cpp).
std::string to_svg(const CompareResult& r);

}  // namespace tandem::tuner
