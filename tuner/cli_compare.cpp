// `tandem compare`: CPU-only, GPU-only, hybrid and auto side by side (tuner/compare.hpp), as a
// table while it runs and as CSV, JSON and an SVG plot; a quick tune first where no profile was
// tuned for this device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <sstream>
#include <stdexcept>

#include "cli.hpp"
#include "compare.hpp"
#include "cotuner.hpp"

namespace tandem::cli {
namespace {

namespace prof = detail::profile;
using nlohmann::json;

struct CompareArgs {
  std::string precision = "both", sizes = "256,512,1024", shape = "square",
              strategies = "cpu,gpu,hybrid,auto";
  std::string csv, json_file, plot, device;
  int reps = 3;
  bool resident = false, no_power = false, no_tune = false;
};

json compare_json(const tuner::CompareResult& r) {
  json j;
  j["power_readable"] = r.power;
  for (const auto& s : r.sources)
    j["power_sources"].push_back(
        {{"name", s.name}, {"available", s.available}, {"detail", s.detail}});
  if (r.power) {
    j["idle"] = {{"seconds", r.idle.seconds}, {"joules", r.idle.joules}, {"watts", r.idle.watts()}};
    j["sampling_overhead"] = r.sampling_overhead;
  }
  j["sampling_note"] = r.overhead_note;
  j["rows"] = json::array();
  for (const auto& x : r.rows) {
    json row = {{"precision", std::string(1, x.precision)},
                {"m", x.m},
                {"n", x.n},
                {"k", x.k},
                {"strategy", x.strategy},
                {"ran", x.ran},
                {"gflops", x.gflops},
                {"gflops_min", x.gflops_min},
                {"gflops_max", x.gflops_max},
                {"seconds", x.seconds},
                {"gpu_rows", x.gpu_rows},
                {"cpu_rows", x.cpu_rows},
                {"cpu_seconds", x.cpu_seconds},
                {"gpu_seconds", x.gpu_seconds},
                {"kernel_seconds", x.kernel_seconds},
                {"kernel_gflops", x.kernel_gflops},
                {"speedup", x.speedup},
                {"max_error", x.max_error},
                {"buffers", x.buffers},
                {"fell_back", x.fell_back}};
    if (x.power)
      row.update(
          {{"joules", x.joules}, {"watts", x.watts}, {"gflops_per_watt", x.gflops_per_watt}});
    j["rows"].push_back(row);
  }
  return j;
}

// Without a profile tuned for this device (a platform or global fallback does not count), a
// quick co-tune first, so auto has something measured here to follow.
void tune_if_untuned(const CompareArgs& a, const tuner::CompareOptions& o) {
  const auto applies = prof::active(identity(a.device));
  if (applies && applies->match == "device") return;
  std::fprintf(stderr,
               "compare: no profile tuned for this device: a quick tune first (tandem tune for a "
               "full one)\n");
  tuner::TuneOptions t;
  t.device = a.device;
  t.precisions = o.precisions;
  t.budget_evaluations = 8;
  t.budget_seconds = 120;
  t.sizes.clear();
  for (const auto& s : o.shapes)
    t.sizes.push_back(
        static_cast<int64_t>(std::lround(std::cbrt(double(s[0]) * double(s[1]) * double(s[2])))));
  std::sort(t.sizes.begin(), t.sizes.end());
  t.sizes.erase(std::unique(t.sizes.begin(), t.sizes.end()), t.sizes.end());
  t.top_kernels = 1;
  t.reps = 3;
  const auto tuned = tuner::tune(t);
  std::fprintf(stderr, "compare: profile saved to %s\n", tuned.saved.string().c_str());
}

// One row of the table on stdout, as it is measured.
void print_row(const tuner::CompareRow& x) {
  char shape[64], rate[64], split[32], energy[64] = "-";
  std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", static_cast<long long>(x.m),
                static_cast<long long>(x.n), static_cast<long long>(x.k));
  std::snprintf(rate, sizeof rate, "%.1f (%.1f-%.1f)", x.gflops, x.gflops_min, x.gflops_max);
  std::snprintf(split, sizeof split, "%lld/%lld", static_cast<long long>(x.gpu_rows),
                static_cast<long long>(x.cpu_rows));
  if (x.power)
    std::snprintf(energy, sizeof energy, "%.3g %.1f %.2f", x.joules, x.watts, x.gflops_per_watt);
  std::printf("%-5s %-16s %-7s %-7s %22s  %-13s %8.2f %8.2f %7s %9.2e %s%s\n",
              x.precision == 's' ? "sgemm" : "dgemm", shape, x.strategy.c_str(), x.ran.c_str(),
              rate, split, x.cpu_seconds * 1e3, x.gpu_seconds * 1e3,
              x.speedup > 0 ? (std::to_string(x.speedup).substr(0, 4) + "x").c_str() : "-",
              x.max_error, energy, x.fell_back ? "  (GPU failed: CPU)" : "");
  std::fflush(stdout);
}

// The options' sizes, shapes and strategies, checked before anything is measured or tuned: ""
// or why they cannot run.
std::string check_options(const CompareArgs& a, tuner::CompareOptions& o) {
  try {
    o.shapes = tuner::parse_shapes(a.shape, tuner::parse_sizes(a.sizes));
    o.strategies = tuner::split_strategies(a.strategies);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  for (const auto& [m, n, k] : o.shapes)
    for (char prec : o.precisions)
      if (std::string why = unrunnable(m, n, k, prec == 'd' ? sizeof(double) : sizeof(float));
          !why.empty())
        return why;
  return "";
}

// tuner::compare, naming what the largest problem needs should memory run out.
tuner::CompareResult measure(const tuner::CompareOptions& o) {
  try {
    return tuner::compare(o);
  } catch (const std::bad_alloc&) {
    double most = 0;
    for (const auto& [m, n, k] : o.shapes) most = std::max(most, operand_bytes(m, n, k, 8));
    throw std::runtime_error("out of memory: the largest problem needs about " + gigabytes(most) +
                             " with the check's copies");
  }
}

int compare(const CompareArgs& a) {
  tuner::CompareOptions o;
  o.precisions =
      a.precision == "both" ? std::vector<char>{'s', 'd'} : std::vector<char>{a.precision[0]};
  if (const std::string why = check_options(a, o); !why.empty())
    return usage_error("compare: " + why);
  o.reps = a.reps;
  o.resident = a.resident;
  o.device = a.device;
  o.power = !a.no_power;
  if (!a.no_tune) tune_if_untuned(a, o);

  std::printf("%-5s %-16s %-7s %-7s %22s  %-13s %8s %8s %7s %9s %s\n", "prec", "m x n x k", "asked",
              "ran", "GFLOPS median (min-max)", "rows gpu/cpu", "cpu ms", "gpu ms", "speedup",
              "max err", "J/call  W  GFLOPS/W");
  o.on_row = print_row;
  const auto r = measure(o);
  std::printf("\npower: %s\n", r.power ? "read" : "not readable here");
  for (const auto& s : r.sources) std::printf("  %s: %s\n", s.name.c_str(), s.detail.c_str());
  if (r.power)
    std::printf(
        "  idle baseline: %.1f W over %.1f s (reported apart from the runs' energy)\n  sampling "
        "cost: %+.2f%% (%s)\n",
        r.idle.watts(), r.idle.seconds, 100 * r.sampling_overhead, r.overhead_note.c_str());
  bool ok = true;
  if (!a.csv.empty()) ok = write_file(a.csv, tuner::to_csv(r)) && ok;
  if (!a.json_file.empty()) ok = write_file(a.json_file, compare_json(r).dump(2) + "\n") && ok;
  if (!a.plot.empty()) ok = write_file(a.plot, tuner::to_svg(r)) && ok;
  return ok ? 0 : 1;
}

}  // namespace

Subcommand add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CompareArgs& a = *args;
  auto* sub = app.add_subcommand(
      "compare", "CPU-only, GPU-only, hybrid and auto side by side: throughput, energy, plot");
  sub->add_option("--precision", a.precision, "s, d or both")
      ->check(CLI::IsMember({"s", "d", "both"}));
  sub->add_option("--sizes", a.sizes, "256,512,... or 256:4096:x2");
  sub->add_option("--shape", a.shape, "square, tall, wide or MxNxK,...");
  sub->add_option("--reps", a.reps, "timed repetitions (median, after a warm-up)")
      ->check(kPositive);
  sub->add_option("--strategies", a.strategies,
                  "from cpu,gpu,hybrid,dynamic,auto,all; NAME:DEVICES runs on a device set "
                  "(gpu:1,2); dynamic is hybrid with dynamic balance");
  sub->add_flag("--resident", a.resident,
                "operands in tandem_malloc memory (used in place by unified-memory devices)");
  sub->add_option("--csv", a.csv, "write the table as CSV");
  sub->add_option("--json", a.json_file, "write the table as JSON");
  sub->add_option("--plot", a.plot, "write an SVG plot");
  sub->add_option("--device", a.device, "device index or name");
  sub->add_flag("--no-power", a.no_power, "do not read power");
  sub->add_flag("--no-tune", a.no_tune, "never tune first, even without a local profile");
  // compare's --json names a file; the top-level --json flag does not change its output.
  return {sub, [args](bool) { return compare(*args); }};
}

}  // namespace tandem::cli
