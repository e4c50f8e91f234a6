// tandem compare: measures every (precision, shape, strategy) with the measuring code the
// benchmarks use (gemm_measure.hpp), reads energy around the timed calls, judges each speedup
// against the runs' spread, and writes CSV (the plot is compare_plot.cpp's).
#include "compare.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/config.hpp"
#include "base/text.hpp"
#include "gemm_measure.hpp"
#include "measure.hpp"
#include "profile/defaults.hpp"

namespace tandem::tuner {
namespace {

// The strategy a name asks for, in lower case only: rows, the plot and the speedup name
// strategies as they were asked.
Strategy strategy_of(const std::string& name, const std::string& whole) {
  const std::optional<Strategy> s = detail::parse_strategy(name);
  if (!s || name != to_string(*s))
    throw std::invalid_argument("unknown strategy '" + whole +
                                "' (cpu, gpu, hybrid, dynamic, auto, all, or one of them:DEVICES)");
  return *s;
}

bool digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// What one timed call ran, from its report: a single call's (rows) or a batch's (problems).
struct Ran {
  std::string strategy, buffers = "-", configuration;
  int64_t gpu = 0, cpu = 0;                                     // rows, or problems in a batch
  double cpu_seconds = 0, gpu_seconds = 0, kernel_seconds = 0;  // single calls only
  bool fell_back = false;
};

// What ran, in enough detail that two rows alike in it ran the same code: auto that chose the CPU
// path is the cpu row again, and any difference between them is noise.
Ran ran_of(const Report& r) {
  Ran x;
  x.strategy = to_string(r.strategy);
  if (r.gpu_rows > 0)
    x.buffers = std::string(to_string(r.a)) + "/" + to_string(r.b) + "/" + to_string(r.c);
  std::ostringstream s;
  s << to_string(r.strategy) << (r.balance == Balance::Dynamic ? " dynamic" : "");
  if (r.cpu_rows > 0) s << "; cpu " << r.cpu_rows << " rows on " << r.cpu_threads << " threads";
  for (const auto& d : r.devices)
    s << "; device " << d.index << " " << d.rows << " rows, " << d.kernel << ", buffers "
      << to_string(d.a) << "/" << to_string(d.b) << "/" << to_string(d.c);
  if (r.fell_back) s << "; fell back to the CPU";
  x.configuration = s.str();
  x.gpu = r.gpu_rows;
  x.cpu = r.cpu_rows;
  x.cpu_seconds = r.cpu_seconds();
  x.gpu_seconds = r.gpu_seconds();
  x.kernel_seconds = r.gpu_kernel_seconds;
  x.fell_back = r.fell_back;
  return x;
}

// A batch's: the problems each side computed (auto's single calls that could use a device count
// as the devices', though no device record lists them) and whether a device failed.
Ran ran_of(const BatchReport& r) {
  Ran x;
  x.strategy = to_string(r.strategy);
  std::ostringstream s;
  s << to_string(r.strategy);
  if (r.cpu_problems > 0)
    s << "; cpu " << r.cpu_problems << " problems on " << r.cpu_threads << " threads";
  for (const auto& d : r.devices) {
    s << "; device " << d.index << " " << d.problems << " problems";
    if (d.failed) s << " (failed)";
    x.fell_back = x.fell_back || d.failed;
  }
  if (r.devices.empty() && r.device_problems > 0)
    s << "; " << r.device_problems << " problems as single calls";
  x.configuration = s.str();
  x.gpu = r.device_problems;
  x.cpu = r.cpu_problems;
  return x;
}

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : bench::median(std::move(v)); }

// Each row's speedup over the faster single device (the CPU, or one OpenCL device alone) where
// both were measured, judged against the samples of that baseline.
void judge_speedups(std::vector<CompareRow>& rows) {
  const CompareRow* cpu = nullptr;
  const CompareRow* gpu = nullptr;
  for (const auto& row : rows) {
    const Variant v = variant_of(row.strategy);
    if (v.strategy == Strategy::Cpu && (!cpu || row.gflops > cpu->gflops)) cpu = &row;
    if (v.single_device() && (!gpu || row.gflops > gpu->gflops)) gpu = &row;
  }
  if (!cpu || !gpu) return;
  const CompareRow& base = gpu->gflops > cpu->gflops ? *gpu : *cpu;
  for (auto& row : rows) {
    const SpeedupCheck c = check_speedup(row.gflops_samples, base.gflops_samples,
                                         row.configuration == base.configuration);
    row.speedup = c.ratio;
    row.speedup_verdict = &row == &base ? CompareRow::Verdict::Baseline : c.verdict;
    row.speedup_note = &row == &base ? "the baseline" : c.note;
    row.speedup_over = base.strategy;
  }
}

// One strategy of a shape while it is measured: what it asks, its samples, what its last call
// ran.
struct Measuring {
  Options opt;
  CompareRow row;
  Ran last;
  std::vector<double> wall, cpu, gpu, kernel;
};

Measuring measuring(const CompareOptions& o, detail::Precision prec,
                    const std::array<int64_t, 3>& shape, const std::string& name) {
  const Variant v = variant_of(name);
  Measuring s;
  s.opt.strategy = v.strategy;
  s.opt.balance = v.balance;
  if (!v.devices.empty())
    s.opt.device = v.devices;
  else if (!o.device.empty())
    s.opt.device = o.device;
  s.row.precision = prec;
  s.row.m = shape[0];
  s.row.n = shape[1];
  s.row.k = shape[2];
  s.row.batch = o.batch;
  s.row.strategy = name;
  return s;
}

// The row from its samples and its last call (its error is the worst of its timed calls').
void finish_row(Measuring& s, double gflop) {
  CompareRow& row = s.row;
  const Ran& r = s.last;
  std::sort(s.wall.begin(), s.wall.end());
  row.seconds = median_of(s.wall);
  row.gflops = gflop / row.seconds;
  row.gflops_min = gflop / s.wall.back();
  row.gflops_max = gflop / s.wall.front();
  row.ran = r.strategy;
  row.gpu_rows = r.gpu;
  row.cpu_rows = r.cpu;
  row.cpu_seconds = median_of(s.cpu);
  row.gpu_seconds = median_of(s.gpu);
  row.kernel_seconds = median_of(s.kernel);
  row.kernel_gflops = row.kernel_seconds > 0 && r.cpu == 0 ? gflop / row.kernel_seconds : 0;
  row.buffers = r.buffers;
  row.configuration = r.configuration;
}

// One timed call of `p` as `opt` asks, and what it ran.
template <class P>
double timed(P& p, const Options& opt, Ran* ran = nullptr) {
  typename P::report_type report;
  const double seconds = p.run(opt, &report);
  if (ran) *ran = ran_of(report);
  return seconds;
}

// Every strategy of one shape, in interleaved rounds: each round runs each strategy, in an order
// drawn for the round (round_order), after a pause for the threads of the one before it to go
// idle (OpenBLAS's and an OpenCL runtime's workers spin a while after their last job, and on a
// CPU device they compete with the next one's), `warmup` times untimed, then once timed. So a
// busy machine's drift hits every strategy alike, as it does the tune's confirmation rounds:
// measured one after another, two strategies that ran the same code differed by up to 0.91x on
// this 2-core machine kept busy by a build, and in rounds whose order only turned by one, where
// auto always ran right after hybrid, auto came out below 0.95x of the cpu row it repeated in
// three of six shapes (0.84-0.92x, 9 rounds). `p` is one product (bench::Problem) or a batch
// (bench::BatchProblem).
template <class P>
void measure_rounds(const CompareOptions& o, P& p, double gflop, power::Meter* meter,
                    std::vector<Measuring>& all, CompareResult& out) {
  using T = std::remove_pointer_t<decltype(p.c)>;
  const auto ref = p.reference();
  for (int round = 0; round < std::max(1, o.reps); ++round)
    for (const size_t i : round_order(all.size(), round)) {
      Measuring& s = all[i];
      std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_seconds));
      for (int w = 0; w < o.warmup; ++w) timed(p, s.opt);
      if (round >= o.reps) continue;  // --reps 0: the warm-up alone
      // C as no strategy left it: each timed call's result is its own to check.
      std::fill(p.c, p.c + p.c_elements(), detail::quiet_nan<T>());
      s.wall.push_back(timed(p, s.opt, &s.last));
      s.row.max_error = std::max(s.row.max_error, p.max_relative_error(ref));
      s.row.gflops_samples.push_back(gflop / s.wall.back());
      s.cpu.push_back(s.last.cpu_seconds);
      s.gpu.push_back(s.last.gpu_seconds);
      s.kernel.push_back(s.last.kernel_seconds);
      s.row.fell_back = s.row.fell_back || s.last.fell_back;
    }
  std::vector<CompareRow> shape_rows;
  for (Measuring& s : all) {
    // Energy over a window of its own, long enough for coarse counters (NVML's updates every
    // few tens of milliseconds): as many calls as fill energy_seconds, at least reps; after the
    // pause.
    if (meter) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_seconds));
      const EnergyWindow e =
          energy_window(*meter, o.reps, o.energy_seconds, [&] { timed(p, s.opt); });
      s.row.power = true;
      s.row.joules = e.energy.joules / e.calls;
      s.row.watts = e.energy.watts();
      s.row.gflops_per_watt = s.row.joules > 0 ? gflop / s.row.joules : 0;
    }
    finish_row(s, gflop);
    shape_rows.push_back(s.row);
  }
  judge_speedups(shape_rows);
  for (auto& row : shape_rows) {
    if (o.on_row) o.on_row(row);
    out.rows.push_back(std::move(row));
  }
}

// One shape of element type T: a product, or a strided batch of o.batch of them.
template <class T>
void measure_shape(const CompareOptions& o, detail::Precision prec,
                   const std::array<int64_t, 3>& shape, power::Meter* meter, CompareResult& out) {
  const auto [m, n, k] = shape;
  const auto seed = static_cast<uint64_t>(m * 31 + n * 7 + k);
  std::vector<Measuring> all;
  for (const auto& name : o.strategies) all.push_back(measuring(o, prec, shape, name));
  const double gflop = bench::gflop<T>(m, n, k);
  if (o.batch > 0) {
    bench::BatchProblem<T> p(m, n, k, o.batch, seed, o.resident);
    measure_rounds(o, p, gflop * static_cast<double>(o.batch), meter, all, out);
  } else {
    bench::Problem<T> p(m, n, k, seed, o.resident);
    measure_rounds(o, p, gflop, meter, all, out);
  }
}

// What reading power costs the run it measures: the same CPU call, alternately with and without
// the meter running; the relative difference of the medians.
template <class T>
void sampling_overhead(const CompareOptions& o, const std::array<int64_t, 3>& shape,
                       power::Meter& meter, CompareResult& out) {
  bench::Problem<T> p(shape[0], shape[1], shape[2], 5, o.resident);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  p.run(cpu);
  std::vector<double> with, without;
  for (int i = 0; i < 7; ++i) {
    without.push_back(p.run(cpu));
    meter.start();
    with.push_back(p.run(cpu));
    meter.stop();
  }
  const double a = median_of(with), b = median_of(without);
  out.sampling_overhead = b > 0 ? (a - b) / b : 0;
  std::ostringstream note;
  note << "reading power during a " << shape[0] << "x" << shape[1] << "x" << shape[2]
       << " CPU call: median " << a * 1e3 << " ms with, " << b * 1e3
       << " ms without (medians of 7, alternated)";
  out.overhead_note = note.str();
}

}  // namespace

std::vector<std::array<int64_t, 3>> shapes_for(const std::string& kind,
                                               const std::vector<int64_t>& sizes) {
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t s : sizes) {
    if (kind == "square")
      out.push_back({s, s, s});
    else if (kind == "tall")
      out.push_back({4 * s, std::max<int64_t>(1, s / 4), s});
    else if (kind == "wide")
      out.push_back({std::max<int64_t>(1, s / 4), 4 * s, s});
    else
      throw std::invalid_argument("unknown shape '" + kind + "' (square, tall, wide or MxNxK)");
  }
  return out;
}

std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> out;
  auto number = [&](const std::string& t) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || v <= 0)
      throw std::invalid_argument("size '" + t + "' is not a positive integer");
    // Larger sizes than the library takes would be refused by every call, and a range up to one
    // would grow past int64_t (1:9223372036854775807:x2 appended sizes until memory ran out).
    if (v > INT_MAX)
      throw std::invalid_argument("size " + t + " is larger than tandem takes (at most " +
                                  std::to_string(INT_MAX) + ")");
    return static_cast<int64_t>(v);
  };
  if (text.find(':') != std::string::npos) {
    // first:last:xF, a geometric range.
    const auto a = text.find(':'), b = text.find(':', a + 1);
    if (b == std::string::npos || text.size() < b + 3 || text[b + 1] != 'x')
      throw std::invalid_argument("sizes range '" + text + "' is not FIRST:LAST:xFACTOR");
    const int64_t first = number(text.substr(0, a)), last = number(text.substr(a + 1, b - a - 1));
    const int64_t factor = number(text.substr(b + 2));
    if (factor < 2 || last < first)
      throw std::invalid_argument("sizes range '" + text + "' is empty");
    for (int64_t s = first; s <= last; s *= factor) out.push_back(s);  // s * factor < 2^62
    return out;
  }
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(number(item));
  if (out.empty()) throw std::invalid_argument("no sizes given");
  return out;
}

std::vector<std::array<int64_t, 3>> parse_shapes(const std::string& text,
                                                 const std::vector<int64_t>& sizes) {
  if (text == "square" || text == "tall" || text == "wide") return shapes_for(text, sizes);
  std::vector<std::array<int64_t, 3>> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::array<int64_t, 3> s{};
    char x1 = 0, x2 = 0;
    std::istringstream one(item);
    std::string rest;
    if (!(one >> s[0] >> x1 >> s[1] >> x2 >> s[2]) || x1 != 'x' || x2 != 'x' || (one >> rest) ||
        s[0] <= 0 || s[1] <= 0 || s[2] <= 0)
      throw std::invalid_argument("shape '" + item + "' is not square, tall, wide or MxNxK");
    out.push_back(s);
  }
  return out;
}

bool Variant::single_device() const {
  return strategy == Strategy::Gpu && devices.find(',') == std::string::npos &&
         detail::text::lower(devices) != "all";
}

Variant variant_of(const std::string& name) {
  if (name == "all") return {Strategy::Hybrid, "all", std::nullopt};
  const size_t colon = name.find(':');
  Variant v;
  const std::string base = name.substr(0, colon);
  if (base == "dynamic") {
    v.strategy = Strategy::Hybrid;
    v.balance = Balance::Dynamic;
  } else {
    v.strategy = strategy_of(base, name);
  }
  if (colon != std::string::npos) {
    v.devices = name.substr(colon + 1);
    if (v.devices.empty()) throw std::invalid_argument("strategy '" + name + "' names no device");
  }
  return v;
}

std::vector<std::string> split_strategies(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (digits(item) && !out.empty() && out.back().find(':') != std::string::npos)
      out.back() += "," + item;
    else
      out.push_back(item);
  }
  return out;
}

CompareResult compare(const CompareOptions& o) {
  if (o.shapes.empty()) throw std::invalid_argument("no shapes to compare");
  if (o.reps < 1) throw std::invalid_argument("reps must be at least 1");
  if (o.batch < 0) throw std::invalid_argument("batch must not be negative");
  for (const auto& [m, n, k] : o.shapes)
    if (o.batch > 0 &&
        static_cast<double>(std::max({m * k, k * n, m * n})) * static_cast<double>(o.batch) >
            static_cast<double>(std::numeric_limits<int64_t>::max() / 2))
      throw std::invalid_argument("a batch of " + std::to_string(o.batch) +
                                  " products is more elements than tandem counts");
  for (const auto& s : o.strategies) variant_of(s);
  CompareResult out;
  std::unique_ptr<power::Meter> meter;
  if (o.power) {
    meter = std::make_unique<power::Meter>(o.power_config);
    out.sources = meter->sources();
    out.power = meter->any();
    if (out.power) out.idle = meter->idle(o.idle_seconds);
  }
  power::Meter* m = out.power ? meter.get() : nullptr;
  for (detail::Precision prec : o.precisions)
    for (const auto& shape : o.shapes)
      detail::with_element_type(
          prec, [&](auto zero) { measure_shape<decltype(zero)>(o, prec, shape, m, out); });
  if (m != nullptr)
    sampling_overhead<float>(o, o.shapes.back(), *m, out);
  else
    out.overhead_note = "no power source is readable here, so nothing is sampled";
  return out;
}

size_t speedup_min_samples() {
  return fewest_samples(detail::profile::confirm_rule().compare_confidence);
}

SpeedupCheck check_speedup(const std::vector<double>& rates, const std::vector<double>& baseline,
                           bool same_configuration) {
  SpeedupCheck c;
  if (rates.empty() || baseline.empty()) return c;
  const double base = median_of(baseline);
  c.ratio = base > 0 ? median_of(rates) / base : 0;
  if (same_configuration) {
    c.verdict = CompareRow::Verdict::SameConfiguration;
    c.note = "ran the same configuration as the baseline";
    return c;
  }
  switch (separate(rates, baseline, detail::profile::confirm_rule().compare_confidence)) {
    case Separation::None:
    case Separation::Overlap:
      c.verdict = CompareRow::Verdict::Noise;
      c.note = "the min-max ranges overlap";
      break;
    case Separation::TooFew: {
      const size_t fewest = std::min(rates.size(), baseline.size());
      c.verdict = CompareRow::Verdict::TooFewRuns;
      c.note = std::to_string(fewest) + (fewest == 1 ? " repetition" : " repetitions") +
               ": too few to tell from noise (at least " + std::to_string(speedup_min_samples()) +
               ")";
      break;
    }
    case Separation::Apart:
      c.verdict = CompareRow::Verdict::Significant;
      break;
  }
  return c;
}

std::string speedup_text(const CompareRow& row) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", row.speedup);
  switch (row.speedup_verdict) {
    case CompareRow::Verdict::None:
      return "-";
    case CompareRow::Verdict::Baseline:
      return "1.00x (baseline)";
    case CompareRow::Verdict::Significant:
      return ratio;
    case CompareRow::Verdict::Noise:
      return "~1.0x (within noise)";
    case CompareRow::Verdict::SameConfiguration:
      return "~1.0x (same config)";
    case CompareRow::Verdict::TooFewRuns:
      return std::string(ratio) + " (untested)";
  }
  return "-";
}

namespace {

// A CSV field: quoted where it holds a comma or a quote (a device set, "gpu:1,2").
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string to_csv(const CompareResult& r) {
  std::ostringstream s;
  s << "precision,m,n,k,batch,strategy,ran,gflops,gflops_min,gflops_max,seconds,gpu_rows,cpu_rows,"
       "cpu_seconds,gpu_seconds,kernel_seconds,kernel_gflops,speedup,max_error,buffers,fell_back,"
       "joules,watts,gflops_per_watt,speedup_significant,speedup_over,speedup_note,configuration\n";
  for (const auto& x : r.rows) {
    s << detail::letter(x.precision) << "," << x.m << "," << x.n << "," << x.k << "," << x.batch
      << "," << csv_field(x.strategy) << "," << x.ran << "," << x.gflops << "," << x.gflops_min
      << "," << x.gflops_max << "," << x.seconds << "," << x.gpu_rows << "," << x.cpu_rows << ","
      << x.cpu_seconds << "," << x.gpu_seconds << "," << x.kernel_seconds << "," << x.kernel_gflops
      << "," << x.speedup << "," << x.max_error << "," << x.buffers << "," << (x.fell_back ? 1 : 0)
      << ",";
    if (x.power)
      s << x.joules << "," << x.watts << "," << x.gflops_per_watt;
    else
      s << ",,";
    s << "," << (x.speedup_significant() ? 1 : 0) << "," << csv_field(x.speedup_over) << ","
      << csv_field(x.speedup_note) << "," << csv_field(x.configuration) << "\n";
  }
  return s.str();
}

}  // namespace tandem::tuner
