// Fitting the cost model to the co-tuner's observations: each part of the model from the
// measurements of that part, so a poor measurement of one part cannot bend another.
#include <algorithm>
#include <cmath>
#include <map>

#include "cost_model.hpp"

namespace tandem::detail::cost {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double gflops_of(const Observation& o) {
  return o.seconds > 0 ? 2e-9 * static_cast<double>(o.m) * static_cast<double>(o.n) *
                             static_cast<double>(o.k) / o.seconds
                       : 0;
}

int64_t smallest_dim(const Observation& o) { return std::min({o.m, o.n, o.k}); }

// A rate table by thread count: the median rate at each count.
std::vector<Sample> table_by_threads(const std::map<int, std::vector<double>>& rates) {
  std::vector<Sample> table;
  for (const auto& [threads, values] : rates)
    table.push_back({static_cast<double>(threads), median(values)});
  return table;
}

// The CPU: rates by threads on the calls with the largest smallest dimension (the square ones),
// a half-dimension for each of m, n and k from a call on the same threads with that dimension
// smaller, and the rates raised to what they would be without the square calls' own penalties.
CpuModel fit_cpu(const std::vector<Observation>& obs) {
  CpuModel cpu;
  int64_t square = 0;
  for (const Observation& o : obs)
    if (o.what == "cpu") square = std::max(square, smallest_dim(o));
  std::map<int, std::vector<double>> rates;
  for (const Observation& o : obs)
    if (o.what == "cpu" && smallest_dim(o) == square) rates[o.threads].push_back(gflops_of(o));
  cpu.gflops_by_threads = table_by_threads(rates);
  std::vector<double> halves[3];
  for (const Observation& o : obs) {
    if (o.what != "cpu" || smallest_dim(o) >= square || !rates.count(o.threads)) continue;
    const int64_t dims[3] = {o.m, o.n, o.k};
    for (int d = 0; d < 3; ++d)
      if (dims[d] < square)
        halves[d].push_back(fit_half_dim(median(rates.at(o.threads)), static_cast<double>(square),
                                         gflops_of(o), static_cast<double>(dims[d])));
  }
  cpu.half_m = median(halves[0]);
  cpu.half_n = median(halves[1]);
  cpu.half_k = median(halves[2]);
  const double sq = static_cast<double>(square);
  double raise = 1;
  for (double h : {cpu.half_m, cpu.half_n, cpu.half_k}) raise *= square > 0 ? (sq + h) / sq : 1;
  for (Sample& t : cpu.gflops_by_threads) t.y *= raise;
  return cpu;
}

// Rates of the bus and of packing, from bytes over seconds.
void fit_rates(const std::vector<Observation>& obs, DeviceModel& d) {
  std::vector<double> in, out;
  std::map<int, std::vector<double>> pack;
  for (const Observation& o : obs) {
    if (o.seconds <= 0 || o.bytes <= 0) continue;
    const double rate = o.bytes / o.seconds;
    if (o.what == "bus_in") in.push_back(rate);
    if (o.what == "bus_out") out.push_back(rate);
    if (o.what == "pack") pack[std::max(1, o.threads)].push_back(rate);
  }
  d.bus_in = median(in);
  d.bus_out = median(out);
  d.pack_by_threads = table_by_threads(pack);
}

// The kernel's launch and rate: its time is a launch per chunk plus its work over whole waves,
// fitted by least squares with both coefficients at least 0.
void fit_kernel(const std::vector<Observation>& obs, int element_bytes, DeviceModel& d) {
  double uu = 0, uv = 0, vv = 0, uy = 0, vy = 0;
  for (const Observation& o : obs) {
    if (o.what != "kernel" || o.seconds <= 0) continue;
    const DeviceModel::Work w = d.kernel_work(shape_of(o, element_bytes), o.m);
    uu += w.launches * w.launches;
    uv += w.launches * w.flops;
    vv += w.flops * w.flops;
    uy += w.launches * o.seconds;
    vy += w.flops * o.seconds;
  }
  double launch = 0, per_flop = 0;
  const double det = uu * vv - uv * uv;
  if (det > 1e-12 * uu * vv) {
    launch = (uy * vv - vy * uv) / det;
    per_flop = (vy * uu - uy * uv) / det;
  }
  if (launch < 0 || per_flop <= 0 || det <= 1e-12 * uu * vv) {  // through the work alone
    launch = 0;
    per_flop = vv > 0 ? vy / vv : 0;
  }
  d.launch = launch;
  d.kernel_gflops = per_flop > 0 ? 1e-9 / per_flop : 0;
}

// The pipeline: what a whole call took beyond its longest part is its latency plus the overlap
// factor times the other parts.
void fit_pipeline(const std::vector<Observation>& obs, int element_bytes, DeviceModel& d) {
  d.latency = 0;
  d.overlap = 0;
  std::vector<Sample> points;
  for (const Observation& o : obs) {
    if (o.what != "device" || o.seconds <= 0) continue;
    const DeviceModel::Parts p = d.parts(shape_of(o, element_bytes), o.m, o.feeders);
    const double longest = std::max({p.kernel, p.in, p.out, p.pack, p.memory});
    const double sum = p.kernel + p.in + p.out + p.pack + p.memory;
    if (std::isfinite(sum)) points.push_back({sum - longest, o.seconds - longest});
  }
  const Line l = fit_line(points);
  d.latency = l.a;
  d.overlap = std::min(1.0, l.b);
}

// How much each side slows while both run: what the model says each side alone would take for
// its rows over what that side took in the split.
void fit_busy(const std::vector<Observation>& obs, Model& m, int element_bytes) {
  std::vector<double> device, cpu;
  for (const Observation& o : obs) {
    if (o.what != "hybrid") continue;
    const Shape s = shape_of(o, element_bytes);
    if (o.device_seconds > 0)
      device.push_back(m.device.seconds(s, o.rows, o.feeders) / o.device_seconds);
    if (o.cpu_seconds > 0)
      cpu.push_back(m.cpu.seconds(o.m - o.rows, o.n, o.k, o.threads) / o.cpu_seconds);
  }
  // A side that ran faster beside the other than the model says it runs alone is not slowed.
  m.both_busy = device.empty() ? 1.0 : std::clamp(median(device), 0.3, 1.0);
  m.cpu_busy = cpu.empty() ? 1.0 : std::clamp(median(cpu), 0.3, 1.0);
}

// What the fitted model says for one observation.
double prediction(const Observation& o, const Model& m, int element_bytes) {
  const Shape s = shape_of(o, element_bytes);
  if (o.what == "cpu") return m.cpu.seconds(o.m, o.n, o.k, o.threads);
  if (o.what == "kernel") return m.device.parts(s, o.m, o.feeders).kernel;
  if (o.what == "bus_in") return o.bytes / m.device.bus_in;
  if (o.what == "bus_out") return o.bytes / m.device.bus_out;
  if (o.what == "pack") return o.bytes / interpolate(m.device.pack_by_threads, o.threads);
  if (o.what == "device") return m.device.seconds(s, o.m, o.feeders);
  if (o.what == "hybrid") {
    const Side side{&m.device, 1, m.both_busy, m.cpu_busy};
    return predict(m.cpu, {side}, s, {o.rows}, o.threads, o.feeders);
  }
  return 0;
}

}  // namespace

Shape shape_of(const Observation& o, int element_bytes) {
  Shape s;
  s.m = o.m;
  s.n = o.n;
  s.k = o.k;
  s.element_bytes = element_bytes;
  s.reads_c = o.reads_c;
  s.pinned = o.pinned;
  return s;
}

Model fit(std::vector<Observation>& observations, const DeviceConstants& device,
          double split_margin) {
  Model m;
  m.split_margin = split_margin;
  m.cpu = fit_cpu(observations);
  m.device.discrete = device.discrete;
  m.device.tile_m = device.tile_m;
  m.device.tile_n = device.tile_n;
  m.device.compute_units = device.compute_units;
  m.device.chunk_fill = device.chunk_fill;
  m.device.chunk_from = device.chunk_from;
  fit_rates(observations, m.device);
  fit_kernel(observations, device.element_bytes, m.device);
  fit_pipeline(observations, device.element_bytes, m.device);
  fit_busy(observations, m, device.element_bytes);
  for (Observation& o : observations) o.predicted = prediction(o, m, device.element_bytes);
  return m;
}

Line fit_line(const std::vector<Sample>& points) {
  Line l;
  if (points.empty()) return l;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Sample& p : points) {
    sx += p.x;
    sy += p.y;
    sxx += p.x * p.x;
    sxy += p.x * p.y;
  }
  const double n = static_cast<double>(points.size());
  const double det = n * sxx - sx * sx;
  const bool two = points.size() >= 2 && det > 1e-12 * n * sxx;
  if (two) {
    l.b = (n * sxy - sx * sy) / det;
    l.a = (sy - l.b * sx) / n;
  }
  if (!two || l.a < 0) {  // through the origin
    l.a = 0;
    l.b = sxx > 0 ? sxy / sxx : 0;
  }
  if (l.b < 0) {  // no dependence on x: the mean
    l.b = 0;
    l.a = std::max(0.0, sy / n);
  }
  return l;
}

double fit_half_dim(double square, double d_square, double small, double d_small) {
  // square / small = (d_square / (d_square + h)) / (d_small / (d_small + h)), solved for h.
  if (square <= 0 || small <= 0 || small >= square || d_small >= d_square) return 0;
  const double r = square / small;
  // A small call slower than any half-dimension explains (r at or beyond d_square / d_small, the
  // limit as it grows) gets a large one.
  if (d_square - r * d_small <= 0) return 1e3 * d_square;
  return d_square * d_small * (r - 1) / (d_square - r * d_small);
}

}  // namespace tandem::detail::cost
