// tandem compare: measures every (precision, shape, strategy) with the measuring code the
// benchmarks use (gemm_measure.hpp), reads energy around the timed calls, and writes CSV and an
// SVG plot drawn here (no plotting dependency).
#include "compare.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "config.hpp"
#include "gemm_measure.hpp"
#include "measure.hpp"
#include "text.hpp"

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

std::string buffers(const Report& r) {
  if (r.gpu_rows == 0) return "-";
  return std::string(to_string(r.a)) + "/" + to_string(r.b) + "/" + to_string(r.c);
}

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : bench::median(std::move(v)); }

template <class T>
void measure_shape(const CompareOptions& o, char prec, const std::array<int64_t, 3>& shape,
                   power::Meter* meter, CompareResult& out) {
  const auto [m, n, k] = shape;
  bench::Problem<T> p(m, n, k, static_cast<uint64_t>(m * 31 + n * 7 + k), o.resident);
  const std::vector<double> ref = p.reference();
  const double gflop = bench::gflop(m, n, k);
  const size_t first = out.rows.size();
  for (const auto& name : o.strategies) {
    const Variant v = variant_of(name);
    Options opt;
    opt.strategy = v.strategy;
    opt.balance = v.balance;
    if (!v.devices.empty())
      opt.device = v.devices;
    else if (!o.device.empty())
      opt.device = o.device;
    CompareRow row;
    row.precision = prec;
    row.m = m;
    row.n = n;
    row.k = k;
    row.strategy = name;
    Report r;
    // Let the previous strategy's threads go idle first (OpenBLAS's and an OpenCL runtime's
    // workers keep spinning a while after their last job, and on a CPU device they would
    // compete with this one's).
    std::this_thread::sleep_for(std::chrono::duration<double>(o.settle_seconds));
    for (int i = 0; i < o.warmup; ++i) p.run(opt, &r);
    std::vector<double> wall, cpu, gpu, kernel;
    for (int i = 0; i < o.reps; ++i) {
      wall.push_back(p.run(opt, &r));
      cpu.push_back(r.cpu_seconds());
      gpu.push_back(r.gpu_seconds());
      kernel.push_back(r.gpu_kernel_seconds);
      row.fell_back = row.fell_back || r.fell_back;
    }
    // Energy over a window of its own, long enough for coarse counters (NVML's updates every
    // few tens of milliseconds): as many calls as fill energy_seconds, at least reps.
    if (meter) {
      const EnergyWindow e = energy_window(*meter, o.reps, o.energy_seconds, [&] { p.run(opt); });
      row.power = true;
      row.joules = e.energy.joules / e.calls;
      row.watts = e.energy.watts();
      row.gflops_per_watt = row.joules > 0 ? gflop / row.joules : 0;
    }
    std::sort(wall.begin(), wall.end());
    row.seconds = median_of(wall);
    row.gflops = gflop / row.seconds;
    row.gflops_min = gflop / wall.back();
    row.gflops_max = gflop / wall.front();
    row.ran = to_string(r.strategy);
    row.gpu_rows = r.gpu_rows;
    row.cpu_rows = r.cpu_rows;
    row.cpu_seconds = median_of(cpu);
    row.gpu_seconds = median_of(gpu);
    row.kernel_seconds = median_of(kernel);
    row.kernel_gflops = row.kernel_seconds > 0 && r.cpu_rows == 0 ? gflop / row.kernel_seconds : 0;
    row.max_error = p.max_relative_error(ref);
    row.buffers = buffers(r);
    out.rows.push_back(row);
  }
  // Speedup over the faster single device (the CPU, or one OpenCL device alone), where both
  // were measured.
  double cpu = 0, gpu = 0;
  for (size_t i = first; i < out.rows.size(); ++i) {
    const Variant v = variant_of(out.rows[i].strategy);
    if (v.strategy == Strategy::Cpu) cpu = std::max(cpu, out.rows[i].gflops);
    if (v.strategy == Strategy::Gpu && v.single_device()) gpu = std::max(gpu, out.rows[i].gflops);
  }
  for (size_t i = first; i < out.rows.size(); ++i) {
    if (cpu > 0 && gpu > 0) out.rows[i].speedup = out.rows[i].gflops / std::max(cpu, gpu);
    if (o.on_row) o.on_row(out.rows[i]);
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
  for (const auto& s : o.strategies) variant_of(s);
  for (char p : o.precisions)
    if (p != 's' && p != 'd') throw std::invalid_argument("precision must be s or d");
  CompareResult out;
  std::unique_ptr<power::Meter> meter;
  if (o.power) {
    meter = std::make_unique<power::Meter>(o.power_config);
    out.sources = meter->sources();
    out.power = meter->any();
    if (out.power) out.idle = meter->idle(o.idle_seconds);
  }
  power::Meter* m = out.power ? meter.get() : nullptr;
  for (char prec : o.precisions)
    for (const auto& shape : o.shapes) {
      if (prec == 's')
        measure_shape<float>(o, prec, shape, m, out);
      else
        measure_shape<double>(o, prec, shape, m, out);
    }
  if (m != nullptr)
    sampling_overhead<float>(o, o.shapes.back(), *m, out);
  else
    out.overhead_note = "no power source is readable here, so nothing is sampled";
  return out;
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
  s << "precision,m,n,k,strategy,ran,gflops,gflops_min,gflops_max,seconds,gpu_rows,cpu_rows,"
       "cpu_seconds,gpu_seconds,kernel_seconds,kernel_gflops,speedup,max_error,buffers,fell_back,"
       "joules,watts,gflops_per_watt\n";
  for (const auto& x : r.rows) {
    s << x.precision << "," << x.m << "," << x.n << "," << x.k << "," << csv_field(x.strategy)
      << "," << x.ran << "," << x.gflops << "," << x.gflops_min << "," << x.gflops_max << ","
      << x.seconds << "," << x.gpu_rows << "," << x.cpu_rows << "," << x.cpu_seconds << ","
      << x.gpu_seconds << "," << x.kernel_seconds << "," << x.kernel_gflops << "," << x.speedup
      << "," << x.max_error << "," << x.buffers << "," << (x.fell_back ? 1 : 0) << ",";
    if (x.power)
      s << x.joules << "," << x.watts << "," << x.gflops_per_watt;
    else
      s << ",,";
    s << "\n";
  }
  return s.str();
}

namespace {

std::string escape(const std::string& t) {
  std::string out;
  for (char c : t) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

const char* colour(const std::string& strategy) {
  if (strategy == "cpu") return "#1f77b4";
  if (strategy == "gpu") return "#d62728";
  if (strategy == "hybrid") return "#2ca02c";
  if (strategy == "auto") return "#9467bd";
  // Device sets and "all": a colour each, the same for the same name in every plot.
  static const char* const kOthers[] = {"#ff7f0e", "#8c564b", "#e377c2",
                                        "#17becf", "#bcbd22", "#7f7f7f"};
  return kOthers[std::hash<std::string>{}(strategy) % (sizeof(kOthers) / sizeof(kOthers[0]))];
}

// One panel: value(row) against cbrt(m n k) on a log2 axis.
void panel(std::ostringstream& s, const CompareResult& r, double top, const char* title,
           const char* unit, const std::function<double(const CompareRow&)>& value) {
  const double left = 80, width = 620, height = 260;  // the legend sits to the right
  double lo = 1e300, hi = 0, vmax = 0;
  for (const auto& x : r.rows) {
    const double size = std::cbrt(double(x.m) * double(x.n) * double(x.k));
    lo = std::min(lo, size);
    hi = std::max(hi, size);
    vmax = std::max(vmax, value(x));
  }
  if (vmax <= 0) vmax = 1;
  const double l0 = std::log2(lo), l1 = std::max(std::log2(hi), l0 + 1);
  auto X = [&](double size) { return left + (std::log2(size) - l0) / (l1 - l0) * width; };
  auto Y = [&](double v) { return top + height - v / (vmax * 1.08) * height; };
  s << "<text x='" << left << "' y='" << top - 12 << "' font-size='15' font-weight='bold'>" << title
    << "</text>\n";
  s << "<rect x='" << left << "' y='" << top << "' width='" << width << "' height='" << height
    << "' fill='none' stroke='#999'/>\n";
  for (int i = 0; i <= 4; ++i) {  // horizontal grid and labels
    const double v = vmax * 1.08 * i / 4, y = Y(v);
    s << "<line x1='" << left << "' x2='" << left + width << "' y1='" << y << "' y2='" << y
      << "' stroke='#eee'/><text x='" << left - 8 << "' y='" << y + 4
      << "' font-size='11' text-anchor='end'>" << static_cast<long long>(std::lround(v))
      << "</text>\n";
  }
  std::set<double> ticks;
  for (const auto& x : r.rows) ticks.insert(std::cbrt(double(x.m) * double(x.n) * double(x.k)));
  for (double t : ticks)
    s << "<text x='" << X(t) << "' y='" << top + height + 16
      << "' font-size='11' text-anchor='middle'>" << static_cast<long long>(std::lround(t))
      << "</text>\n";
  s << "<text x='" << left + width / 2 << "' y='" << top + height + 34
    << "' font-size='12' text-anchor='middle'>size (cube root of m·n·k)</text>\n";
  s << "<text x='20' y='" << top + height / 2 << "' font-size='12' transform='rotate(-90 20 "
    << top + height / 2 << ")' text-anchor='middle'>" << unit << "</text>\n";
  std::map<std::pair<char, std::string>, std::vector<std::pair<double, double>>> lines;
  for (const auto& x : r.rows)
    lines[{x.precision, x.strategy}].push_back(
        {std::cbrt(double(x.m) * double(x.n) * double(x.k)), value(x)});
  int legend = 0;
  for (auto& [key, pts] : lines) {
    std::sort(pts.begin(), pts.end());
    s << "<polyline fill='none' stroke='" << colour(key.second) << "' stroke-width='2'"
      << (key.first == 'd' ? " stroke-dasharray='6 4'" : "") << " points='";
    for (const auto& [size, v] : pts) s << X(size) << "," << Y(v) << " ";
    s << "'/>\n";
    for (const auto& [size, v] : pts)
      s << "<circle cx='" << X(size) << "' cy='" << Y(v) << "' r='3' fill='" << colour(key.second)
        << "'/>\n";
    const double ly = top + 14 + 16 * legend++, lx = left + width + 14;
    s << "<line x1='" << lx << "' x2='" << lx + 28 << "' y1='" << ly << "' y2='" << ly
      << "' stroke='" << colour(key.second) << "' stroke-width='2'"
      << (key.first == 'd' ? " stroke-dasharray='6 4'" : "") << "/><text x='" << lx + 34 << "' y='"
      << ly + 4 << "' font-size='12'>" << key.first << "gemm " << escape(key.second) << "</text>\n";
  }
}

}  // namespace

std::string to_svg(const CompareResult& r) {
  const bool watts = r.power && std::any_of(r.rows.begin(), r.rows.end(), [](const CompareRow& x) {
                       return x.gflops_per_watt > 0;
                     });
  const int height = watts ? 720 : 380;
  std::ostringstream s;
  s << "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' "
       "width='880' height='"
    << height << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  panel(s, r, 40, "Throughput (solid: sgemm, dashed: dgemm)", "GFLOPS",
        [](const CompareRow& x) { return x.gflops; });
  if (watts)
    panel(s, r, 400, "Energy efficiency", "GFLOPS per watt",
          [](const CompareRow& x) { return x.gflops_per_watt; });
  s << "</svg>\n";
  return s.str();
}

}  // namespace tandem::tuner
