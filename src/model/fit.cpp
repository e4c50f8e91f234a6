// Fitting the cost model to the co-tuner's observations: each part of the model from the
// measurements of that part, so a poor measurement of one part cannot bend another.
#include <algorithm>
#include <cmath>
#include <map>

#include "model/cost_model.hpp"

namespace tandem::detail::cost {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double flops(const Observation& o, const DeviceConstants& device) {
  return shape_of(o, device).flops(o.m);
}

double f(int64_t d, double half) {
  const double x = static_cast<double>(d);
  return x / (x + half);
}

// A rate table by thread count: the median rate at each count.
std::vector<Sample> table_by_threads(const std::map<int, std::vector<double>>& rates) {
  std::vector<Sample> table;
  for (const auto& [threads, values] : rates)
    table.push_back({static_cast<double>(threads), median(values)});
  return table;
}

// The CPU, from three kinds of call: square ones of one size, by thread count (the rates); ones
// with one dimension small and about the work of a square one (a half-dimension for that
// dimension); and a smaller square one (what a call costs beyond its flops). Each part depends on
// the others a little, so they are solved in turn until they agree.
CpuModel fit_cpu(const std::vector<Observation>& obs, const DeviceConstants& device) {
  CpuModel cpu;
  int64_t square = 0;
  std::vector<const Observation*> squares, thin, small;
  for (const Observation& o : obs)
    if (o.what == "cpu" && o.m == o.n && o.n == o.k) square = std::max(square, o.m);
  for (const Observation& o : obs) {
    if (o.what != "cpu" || o.seconds <= 0) continue;
    const int64_t big = std::max({o.m, o.n, o.k});
    const int64_t dims[3] = {o.m, o.n, o.k};
    if (o.m == o.n && o.n == o.k)
      (o.m == square ? squares : small).push_back(&o);
    else if (std::count(dims, dims + 3, big) == 2)  // one dimension small, the others alike
      thin.push_back(&o);
  }
  // A call's fixed cost is at most half of the shortest call it is taken from: a small call
  // measured slow on a busy machine would otherwise make the larger calls' time all fixed cost,
  // and their rates unbounded (a tune under load once fitted 2.4e71 GFLOPS).
  double latency_cap = HUGE_VAL;
  for (const auto* group : {&squares, &thin})
    for (const Observation* o : *group) latency_cap = std::min(latency_cap, 0.5 * o->seconds);
  // The part of a call's rate its shape leaves, and the flops a second the rate gives.
  const auto shape_part = [&](const Observation& o) {
    return f(o.m, cpu.half_m) * f(o.n, cpu.half_n) * f(o.k, cpu.half_k);
  };
  for (int round = 0; round < 50; ++round) {
    std::map<int, std::vector<double>> rates;
    for (const Observation* o : squares)
      rates[o->threads].push_back(1e-9 * flops(*o, device) /
                                  std::max(o->seconds - cpu.latency, 1e-12) / shape_part(*o));
    cpu.gflops_by_threads = table_by_threads(rates);
    std::vector<double> halves[3];
    for (const Observation* o : thin) {
      const double rate = cpu.gflops(o->threads) * 1e9;
      const int64_t dims[3] = {o->m, o->n, o->k};
      const double halves_now[3] = {cpu.half_m, cpu.half_n, cpu.half_k};
      const int d = static_cast<int>(std::min_element(dims, dims + 3) - dims);
      // What the small dimension leaves of the rate, the others' parts taken out.
      double others = 1;
      for (int e = 0; e < 3; ++e)
        if (e != d) others *= f(dims[e], halves_now[e]);
      const double part =
          flops(*o, device) / (std::max(o->seconds - cpu.latency, 1e-12) * rate * others);
      if (rate > 0 && part > 0)
        halves[d].push_back(std::max(0.0, static_cast<double>(dims[d]) * (1 / part - 1)));
    }
    // A half-dimension is at most the square calls' size (a dimension that large keeps at least
    // half the rate): a thin call measured slow on a busy machine would otherwise give one far
    // above every size measured, shrink the square calls' shape part and lift their rates round
    // after round (a tune under load once fitted 8.9e48 GFLOPS).
    const double most = square > 0 ? static_cast<double>(square) : HUGE_VAL;
    cpu.half_m = std::min(median(halves[0]), most);
    cpu.half_n = std::min(median(halves[1]), most);
    cpu.half_k = std::min(median(halves[2]), most);
    std::vector<double> latencies;
    for (const Observation* o : small)
      latencies.push_back(std::max(
          0.0, o->seconds - flops(*o, device) / (cpu.gflops(o->threads) * 1e9 * shape_part(*o))));
    cpu.latency = std::min(median(latencies), latency_cap);
  }
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
void fit_kernel(const std::vector<Observation>& obs, const DeviceConstants& device,
                DeviceModel& d) {
  double uu = 0, uv = 0, vv = 0, uy = 0, vy = 0;
  for (const Observation& o : obs) {
    if (o.what != "kernel" || o.seconds <= 0) continue;
    const DeviceModel::Work w = d.kernel_work(shape_of(o, device), o.m);
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
void fit_pipeline(const std::vector<Observation>& obs, const DeviceConstants& device,
                  DeviceModel& d) {
  d.latency = 0;
  d.overlap = 0;
  std::vector<Sample> points;
  for (const Observation& o : obs) {
    if (o.what != "device" || o.seconds <= 0) continue;
    const DeviceModel::Parts p = d.parts(shape_of(o, device), o.m, o.feeders);
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
void fit_busy(const std::vector<Observation>& obs, Model& m, const DeviceConstants& constants) {
  std::vector<double> device, cpu;
  for (const Observation& o : obs) {
    if (o.what != "hybrid") continue;
    const Shape s = shape_of(o, constants);
    if (o.device_seconds > 0)
      device.push_back(m.device.seconds(s, o.rows, o.feeders) / o.device_seconds);
    if (o.cpu_seconds > 0) cpu.push_back(m.cpu.seconds(s, o.m - o.rows, o.threads) / o.cpu_seconds);
  }
  // A side that ran faster beside the other than the model says it runs alone is not slowed.
  m.both_busy = device.empty() ? 1.0 : std::clamp(median(device), 0.3, 1.0);
  m.cpu_busy = cpu.empty() ? 1.0 : std::clamp(median(cpu), 0.3, 1.0);
}

// What the fitted model says for one observation.
double prediction(const Observation& o, const Model& m, const DeviceConstants& device) {
  const Shape s = shape_of(o, device);
  if (o.what == "cpu") return m.cpu.seconds(s, o.m, o.threads);
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

Shape shape_of(const Observation& o, const DeviceConstants& device) {
  Shape s;
  s.m = o.m;
  s.n = o.n;
  s.k = o.k;
  s.element_bytes = device.element_bytes;
  s.flops_per_multiply_add = device.flops_per_multiply_add;
  s.reads_c = o.reads_c;
  s.pinned = o.pinned;
  return s;
}

Model fit(std::vector<Observation>& observations, const DeviceConstants& device,
          double split_margin) {
  Model m;
  m.split_margin = split_margin;
  m.cpu = fit_cpu(observations, device);
  m.device.discrete = device.discrete;
  m.device.tile_m = device.tile_m;
  m.device.tile_n = device.tile_n;
  m.device.compute_units = device.compute_units;
  m.device.chunk_fill = device.chunk_fill;
  m.device.chunk_from = device.chunk_from;
  fit_rates(observations, m.device);
  fit_kernel(observations, device, m.device);
  fit_pipeline(observations, device, m.device);
  fit_busy(observations, m, device);
  for (Observation& o : observations) o.predicted = prediction(o, m, device);
  // A split is planned only when it beats the better single side by more than the model missed
  // the splits it was fitted to (the H100 host, 2026-11-23: 19% in dgemm, 26% in sgemm, where
  // the single devices' misses were smaller): the co-tuner's margin, or that miss if larger.
  for (const Observation& o : observations)
    if (o.what == "hybrid" && o.seconds > 0 && o.predicted > 0)
      m.split_margin = std::max(m.split_margin, std::abs(o.predicted / o.seconds - 1));
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

}  // namespace tandem::detail::cost
