// `tandem compare`: CPU-only, GPU-only, hybrid and auto side by side (cli/compare.hpp), as a
// table while it runs (or JSON at the end, with --json) and as CSV, JSON and an SVG plot in
// files, ./tandem-compare.* unless named; a quick tune first where no profile was tuned for this
// device.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>

#include "cli.hpp"
#include "compare.hpp"
#include "cotuner.hpp"
#include "profile/store.hpp"

namespace tandem::cli {
namespace {

namespace prof = detail::profile;
using nlohmann::json;

struct CompareArgs {
  std::string precision = "both", sizes = "256,512,1024", shape = "square",
              strategies = "cpu,gpu,hybrid,auto";
  std::string csv = "tandem-compare.csv", json_file = "tandem-compare.json",
              plot = "tandem-compare.svg", device;
  int reps = 3;
  int64_t batch = 0;
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
    json row = {{"precision", std::string(1, detail::letter(x.precision))},
                {"m", x.m},
                {"n", x.n},
                {"k", x.k},
                {"batch", x.batch},
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
                {"speedup_significant", x.speedup_significant()},
                {"speedup_over", x.speedup_over},
                {"speedup_note", x.speedup_note},
                {"gflops_samples", x.gflops_samples},
                {"configuration", x.configuration},
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
  // The batch rule only where compare times batches (its --batch).
  t.batch = o.batch > 0;
  // The coalesced kernel's buckets with a few candidates each, as befits a quick tune.
  t.batch_kernel_evaluations = 6;
  // The tune's own progress display: a minute with nothing on the terminal looks like a hang.
  const bool tty = isatty(STDERR_FILENO) != 0;
  t.on_progress = [tty](const tuner::Progress& p) { print_tune_progress(p, tty); };
  const auto tuned = tuner::tune(t);
  if (tty) std::fprintf(stderr, "\n");
  if (tuned.saved.empty())
    std::fprintf(stderr, "compare: profile kept in memory (no profile directory)\n");
  else
    std::fprintf(stderr, "compare: profile saved to %s\n", tuned.saved.string().c_str());
}

// One row of the table, as it is measured.
void print_row(FILE* out, const tuner::CompareRow& x) {
  char shape[64], rate[64], split[32], energy[64] = "-";
  std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", static_cast<long long>(x.m),
                static_cast<long long>(x.n), static_cast<long long>(x.k));
  std::snprintf(rate, sizeof rate, "%.1f (%.1f-%.1f)", x.gflops, x.gflops_min, x.gflops_max);
  std::snprintf(split, sizeof split, "%lld/%lld", static_cast<long long>(x.gpu_rows),
                static_cast<long long>(x.cpu_rows));
  if (x.power)
    std::snprintf(energy, sizeof energy, "%.3g %.1f %.2f", x.joules, x.watts, x.gflops_per_watt);
  // A batch's sides have no times of their own: the call's is the rate's.
  char cpu_ms[16] = "-", gpu_ms[16] = "-";
  if (x.batch == 0) {
    std::snprintf(cpu_ms, sizeof cpu_ms, "%.2f", x.cpu_seconds * 1e3);
    std::snprintf(gpu_ms, sizeof gpu_ms, "%.2f", x.gpu_seconds * 1e3);
  }
  std::fprintf(out, "%-5s %-16s %-7s %-7s %22s  %-13s %8s %8s %-20s %9.2e %s%s\n",
               detail::routine_name(x.precision, "gemm").c_str(), shape, x.strategy.c_str(),
               x.ran.c_str(), rate, split, cpu_ms, gpu_ms, tuner::speedup_text(x).c_str(),
               x.max_error, energy, x.fell_back ? "  (GPU failed: CPU)" : "");
  std::fflush(out);
}

// What the speedup column's words mean, under the table, where any row needs them.
void print_speedup_key(FILE* out, const tuner::CompareResult& r) {
  using V = tuner::CompareRow::Verdict;
  auto any = [&](V v) {
    return std::any_of(r.rows.begin(), r.rows.end(),
                       [v](const tuner::CompareRow& x) { return x.speedup_verdict == v; });
  };
  if (any(V::Baseline))
    std::fprintf(out,
                 "\nspeedup: over the faster single device (baseline) of each shape, median over "
                 "median\n");
  if (any(V::Noise))
    std::fprintf(out,
                 "  ~1.0x (within noise): the min-max ranges overlap; the raw ratio is in the CSV "
                 "and JSON\n");
  if (any(V::SameConfiguration))
    std::fprintf(out,
                 "  ~1.0x (same config): it ran what the baseline ran (same rows, threads, devices "
                 "and kernels): a difference is noise, the order of the runs, or the cost of "
                 "choosing\n");
  if (any(V::TooFewRuns))
    std::fprintf(out, "  (untested): apart, but fewer than %zu repetitions each; use --reps %zu\n",
                 tuner::speedup_min_samples(), tuner::speedup_min_samples());
}

// The power sources and baseline under the table.
void print_power(FILE* out, const tuner::CompareResult& r) {
  std::fprintf(out, "\npower: %s\n", r.power ? "read" : "not readable here");
  for (const auto& s : r.sources) std::fprintf(out, "  %s: %s\n", s.name.c_str(), s.detail.c_str());
  if (r.power)
    std::fprintf(
        out,
        "  idle baseline: %.1f W over %.1f s (reported apart from the runs' energy)\n  sampling "
        "cost: %+.2f%% (%s)\n",
        r.idle.watts(), r.idle.seconds, 100 * r.sampling_overhead, r.overhead_note.c_str());
}

// Writes the files that are named ("" names none) and says where on `out`; false if one could
// not be written.
bool write_outputs(FILE* out, const CompareArgs& a, const tuner::CompareResult& r,
                   const json& doc) {
  bool ok = true;
  std::string wrote;
  auto one = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    if (!write_file(path, text)) {
      ok = false;
      return;
    }
    wrote += (wrote.empty() ? "" : ", ") + std::filesystem::absolute(path).string();
  };
  one(a.csv, tuner::to_csv(r));
  one(a.json_file, doc.dump(2) + "\n");
  one(a.plot, tuner::to_svg(r));
  if (!wrote.empty()) std::fprintf(out, "compare: wrote %s\n", wrote.c_str());
  return ok;
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
  if (o.strategies.empty()) return "--strategies names no strategy";
  // Two outputs into one file would leave only the last.
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--out-csv", &a.csv}, {"--out-json", &a.json_file}, {"--out-plot", &a.plot}};
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = i + 1; j < 3; ++j)
      if (!outputs[i].second->empty() && !outputs[j].second->empty() &&
          std::filesystem::absolute(*outputs[i].second).lexically_normal() ==
              std::filesystem::absolute(*outputs[j].second).lexically_normal())
        return std::string(outputs[i].first) + " and " + outputs[j].first + " name one file, " +
               *outputs[i].second;
  for (const auto& [m, n, k] : o.shapes)
    for (detail::Precision prec : o.precisions)
      if (std::string why = unrunnable(m, n, k, prec, std::max<int64_t>(1, a.batch)); !why.empty())
        return why;
  return "";
}

// tuner::compare, naming what the largest problem needs should memory run out.
tuner::CompareResult measure(const tuner::CompareOptions& o) {
  try {
    return tuner::compare(o);
  } catch (const std::bad_alloc&) {
    double most = 0;
    for (const auto& [m, n, k] : o.shapes)
      for (detail::Precision prec : o.precisions)
        most = std::max(most, operand_bytes(m, n, k, prec, std::max<int64_t>(1, o.batch)));
    throw std::runtime_error("out of memory: the largest problem needs about " + gigabytes(most) +
                             " with the check's copies");
  }
}

// With --json, standard output carries the JSON document alone, and the table goes to stderr.
int compare(const CompareArgs& a, bool as_json) {
  tuner::CompareOptions o;
  o.precisions = parse_precisions(a.precision);
  if (const std::string why = check_options(a, o); !why.empty())
    throw UsageError("compare: " + why);
  o.reps = a.reps;
  o.batch = a.batch;
  o.resident = a.resident;
  o.device = a.device;
  o.power = !a.no_power;
  if (!a.no_tune) tune_if_untuned(a, o);

  FILE* table = as_json ? stderr : stdout;
  if (a.batch > 0)
    std::fprintf(table,
                 "each call: a strided batch of %lld products of the shape (gemm_batch_strided); "
                 "GFLOPS count every product, the split counts problems\n",
                 static_cast<long long>(a.batch));
  std::fprintf(table, "%-5s %-16s %-7s %-7s %22s  %-13s %8s %8s %-20s %9s %s\n", "prec",
               "m x n x k", "asked", "ran", "GFLOPS median (min-max)",
               a.batch > 0 ? "probs gpu/cpu" : "rows gpu/cpu", "cpu ms", "gpu ms", "speedup",
               "max err", "J/call  W  GFLOPS/W");
  o.on_row = [table](const tuner::CompareRow& x) { print_row(table, x); };
  const auto r = measure(o);
  print_speedup_key(table, r);
  print_power(table, r);
  const json doc = compare_json(r);
  const bool ok = write_outputs(table, a, r, doc);
  if (as_json) std::cout << doc.dump(2) << "\n";
  return ok ? kExitOk : kExitFailed;
}

// Each option is checked as it is parsed, so that a wrong one stops the command before the quick
// tune and the runs: the sizes, the shapes (against any size) and every strategy.
CLI::Validator checked_by(std::function<void(const std::string&)> parse, const char* name) {
  return CLI::Validator(
      [parse](std::string& v) {
        try {
          parse(v);
        } catch (const std::exception& e) {  // invalid_argument, and out_of_range from stoll
          return std::string(e.what());
        }
        return std::string();
      },
      name);
}

}  // namespace

Subcommand add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CompareArgs& a = *args;
  auto* sub = app.add_subcommand(
      "compare", "CPU-only, GPU-only, hybrid and auto side by side: throughput, energy, plot");
  sub->add_option("--precision", a.precision, "s, d, c, z, both (s and d) or all")
      ->check(kPrecisions);
  sub->add_option("--sizes", a.sizes, "256,512,... or 256:4096:x2")
      ->check(checked_by([](const std::string& v) { tuner::parse_sizes(v); }, "SIZES"));
  sub->add_option("--shape", a.shape, "square, tall, wide or MxNxK,...")
      ->check(checked_by([](const std::string& v) { tuner::parse_shapes(v, {64}); }, "SHAPES"));
  sub->add_option("--reps", a.reps, "timed repetitions (median, after a warm-up)")
      ->check(kPositive);
  sub->add_option("--strategies", a.strategies,
                  "from cpu,gpu,hybrid,dynamic,auto,all; NAME:DEVICES runs on a device set "
                  "(gpu:1,2); dynamic is hybrid with dynamic balance")
      ->check(checked_by(
          [](const std::string& v) {
            for (const auto& name : tuner::split_strategies(v)) tuner::variant_of(name);
          },
          "LIST"));
  sub->add_option("--batch", a.batch,
                  "each shape as one strided batch of COUNT products (gemm_batch_strided)")
      ->check(kPositive);
  sub->add_flag("--resident", a.resident,
                "operands in tandem_malloc memory (used in place by unified-memory devices)");
  sub->add_option("--out-csv", a.csv, "the table as CSV (\"\": none)")->check(kWritableFile);
  sub->add_option("--out-json", a.json_file, "the table as JSON (\"\": none)")
      ->check(kWritableFile);
  sub->add_option("--out-plot", a.plot, "an SVG plot (\"\": none)")->check(kWritableFile);
  sub->add_option("--device", a.device, "device index or name");
  sub->add_flag("--no-power", a.no_power, "do not read power");
  sub->add_flag("--no-tune", a.no_tune, "never tune first, even without a local profile");
  return {sub, [args](bool as_json) { return compare(*args, as_json); }};
}

}  // namespace tandem::cli
