// The cost model's arithmetic: each side's predicted time, and the plan that balances them.
#include "model/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "model/chunks.hpp"

namespace tandem::detail::cost {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t x, int64_t d) { return (x + d - 1) / d; }

double f(int64_t d, double half) {
  const double x = static_cast<double>(d);
  return x / (x + half);
}

// The rows a side gets when the devices before it took `taken` of m and it may take `wanted`.
int64_t clamp_rows(int64_t wanted, int64_t taken, int64_t m) {
  return std::max<int64_t>(0, std::min(wanted, m - taken));
}

// The CPU's thread counts worth comparing on `cores` cores: every count on a small machine,
// else a spread that keeps the ones a profile's search tries.
std::vector<int> thread_counts(int cores) {
  std::set<int> counts;
  if (cores <= 8) {
    for (int c = 1; c <= cores; ++c) counts.insert(c);
  } else {
    for (int c : {cores, cores - 1, cores - 2, cores - 3, cores - 4, cores * 3 / 4, cores / 2,
                  cores / 4, cores / 8, 2, 1})
      if (c >= 1) counts.insert(c);
  }
  return {counts.begin(), counts.end()};
}

// Every planned side's time, slowed by its both-busy factor while the CPU and a device both have
// rows.
double side_time(double alone, bool contended, double both_busy) {
  return contended ? alone / std::max(both_busy, 1e-3) : alone;
}

// The part of B's packing that falls to each side (DeviceModel::parts): B is packed once for the
// sides of one platform that pack it (discrete, operands not pinned) and have rows (`rows` empty:
// every such side, as when the rows are still being divided).
std::vector<double> b_parts(const std::vector<Side>& devices, const Shape& s,
                            const std::vector<int64_t>& rows) {
  const auto packs = [&](size_t i) {
    return devices[i].model->discrete && devices[i].model->feeds(devices[i].seen(s)) &&
           (rows.empty() || (i < rows.size() && rows[i] > 0));
  };
  std::vector<double> out(devices.size(), 1.0);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!packs(i)) continue;
    int sharing = 0;
    for (size_t j = 0; j < devices.size(); ++j)
      sharing += packs(j) && devices[j].platform == devices[i].platform ? 1 : 0;
    out[i] = 1.0 / std::max(1, sharing);
  }
  return out;
}

// The most rows (whole tiles, or all of m - taken) a device can take within `limit` seconds, its
// part of B's packing `b_packed`, when the devices before it already keep the host's memory busy
// for `memory_used` seconds (predict()'s floor).
int64_t rows_within(const Side& d, const Shape& s, int feeders, bool contended, int64_t taken,
                    double limit, double b_packed, double memory_used) {
  const int64_t left = s.m - taken;
  if (left <= 0) return 0;
  const int64_t tile = std::max<int64_t>(1, d.tile);
  const int64_t units = (left + tile - 1) / tile;
  const Shape seen = d.seen(s);
  auto time = [&](int64_t u) {
    const DeviceModel::Parts p = d.model->parts(seen, std::min(u * tile, left), feeders, b_packed);
    return std::max(side_time(d.model->seconds(p), contended, d.both_busy), memory_used + p.memory);
  };
  if (time(1) > limit) return 0;
  int64_t lo = 1, hi = units;
  if (time(hi) <= limit) return left;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (time(mid) <= limit ? lo : hi) = mid;
  }
  return lo * tile;
}

// The most rows the CPU can take within `limit` seconds on `threads` threads.
int64_t cpu_rows_within(const CpuModel& cpu, const Shape& s, int threads, double both_busy,
                        bool contended, double limit) {
  auto time = [&](int64_t r) {
    return side_time(cpu.seconds(s, r, threads), contended, both_busy);
  };
  if (time(1) > limit) return 0;
  if (time(s.m) <= limit) return s.m;
  int64_t lo = 1, hi = s.m;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (time(mid) <= limit ? lo : hi) = mid;
  }
  return lo;
}

// One device beside the CPU on `threads` threads: the first whole tile at which the device's
// time passes the CPU's on the rows left, and the tile before it; the better of the two.
Plan balance_one(const CpuModel& cpu, const Side& d, const Shape& s, int threads, int feeders) {
  const int64_t tile = std::max<int64_t>(1, d.tile);
  const int64_t units = (s.m + tile - 1) / tile;
  auto rows_at = [&](int64_t u) { return std::min(u * tile, s.m); };
  const Shape seen = d.seen(s);
  auto device_ahead = [&](int64_t u) {
    return side_time(d.model->seconds(seen, rows_at(u), feeders), true, d.both_busy) >=
           side_time(cpu.seconds(s, s.m - rows_at(u), threads), true, d.cpu_busy);
  };
  int64_t lo = 0, hi = units;  // the device is behind at lo, ahead at hi
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (device_ahead(mid) ? hi : lo) = mid;
  }
  Plan best{{0}, 0, 0, 0, kInf};
  for (int64_t u : {lo, hi}) {
    if (u <= 0 || rows_at(u) >= s.m) continue;  // a split keeps rows on both sides
    const std::vector<int64_t> rows{rows_at(u)};
    const double t = predict(cpu, {d}, s, rows, threads, feeders);
    if (t < best.seconds) best = Plan{rows, s.m - rows[0], threads, feeders, t};
  }
  return best;
}

// The devices' rows that finish together within the least time, with the CPU taking rows on
// `threads` threads (0: none): bisection on the finishing time. One device beside the CPU takes
// the shorter way above.
Plan balance(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s, int threads,
             int feeders, double hi) {
  if (devices.size() == 1 && threads > 0) return balance_one(cpu, devices[0], s, threads, feeders);
  const bool contended = threads > 0;
  double cpu_busy = 1;
  for (const Side& d : devices) cpu_busy = std::min(cpu_busy, d.cpu_busy);
  const std::vector<double> b_packed = b_parts(devices, s, {});
  auto fill = [&](double limit, Plan& plan) {
    plan.rows.assign(devices.size(), 0);
    int64_t taken = 0;
    double memory = 0;
    for (size_t i = 0; i < devices.size(); ++i) {
      plan.rows[i] = clamp_rows(
          rows_within(devices[i], s, feeders, contended, taken, limit, b_packed[i], memory), taken,
          s.m);
      taken += plan.rows[i];
      memory +=
          devices[i].model->parts(devices[i].seen(s), plan.rows[i], feeders, b_packed[i]).memory;
    }
    plan.cpu_rows = s.m - taken;
    if (plan.cpu_rows == 0) return true;
    if (!contended) return false;
    return cpu_rows_within(cpu, s, threads, cpu_busy, contended, limit) >= plan.cpu_rows;
  };
  Plan plan;
  double lo = 0;
  if (!fill(hi, plan)) return Plan{{}, 0, 0, 0, kInf};
  for (int i = 0; i < 40 && hi - lo > 1e-4 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    Plan trial;
    (fill(mid, trial) ? hi : lo) = mid;
  }
  fill(hi, plan);
  plan.cpu_threads = plan.cpu_rows > 0 ? threads : 0;
  plan.feeders = feeders;
  plan.seconds = predict(cpu, devices, s, plan.rows, plan.cpu_threads, feeders);
  return plan;
}

}  // namespace

double interpolate(const std::vector<Sample>& table, double x) {
  if (table.empty()) return 0;
  if (x <= table.front().x) return table.front().y * x / std::max(table.front().x, 1e-12);
  for (size_t i = 1; i < table.size(); ++i)
    if (x <= table[i].x) {
      const Sample &a = table[i - 1], &b = table[i];
      return a.y + (b.y - a.y) * (x - a.x) / std::max(b.x - a.x, 1e-12);
    }
  return table.back().y;
}

double CpuModel::seconds(const Shape& s, int64_t rows, int threads) const {
  if (rows <= 0 || s.n <= 0 || s.k <= 0) return 0;
  const double rate = gflops(threads) * f(rows, half_m) * f(s.n, half_n) * f(s.k, half_k);
  if (rate <= 0) return kInf;
  return latency + s.flops(rows) / (rate * 1e9);
}

DeviceModel::Work DeviceModel::kernel_work(const Shape& s, int64_t rows) const {
  Work w;
  if (rows <= 0) return w;
  const int64_t tm = std::max<int64_t>(1, tile_m), tn = std::max<int64_t>(1, tile_n);
  const int64_t units = std::max(1, compute_units);
  const double e = s.element_bytes;
  // The bytes discrete_share.cpp's chunk rule counts: each operand once.
  const double bytes = e * static_cast<double>(rows * s.k + s.k * s.n + rows * s.n);
  const int64_t step = discrete && chunk_fill > 0
                           ? chunk_rows(rows, s.n, static_cast<size_t>(bytes), tm, tn,
                                        compute_units, chunk_fill, static_cast<size_t>(chunk_from))
                           : rows;
  // Each launch's work-groups run in waves of one per compute unit; a wave that is not full
  // takes as long as one that is.
  for (int64_t r0 = 0; r0 < rows; r0 += step) {
    const int64_t groups = ceil_div(std::min(step, rows - r0), tm) * ceil_div(s.n, tn);
    w.launches += 1;
    w.flops += static_cast<double>(ceil_div(groups, units) * units) *
               (s.flops_per_multiply_add * static_cast<double>(tm * tn) * static_cast<double>(s.k));
  }
  return w;
}

DeviceModel::Parts DeviceModel::parts(const Shape& s, int64_t rows, int feeders,
                                      double b_packed) const {
  Parts p;
  if (rows <= 0) return p;
  const Work w = kernel_work(s, rows);
  p.kernel = kernel_gflops > 0 ? launch * w.launches + w.flops / (kernel_gflops * 1e9) : kInf;
  const double e = s.element_bytes;
  const double r = static_cast<double>(rows), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k);
  // C's old values go in where C is copied as it is. From ordinary memory a discrete device's host
  // adds beta C to the product as it unpacks instead (gpu/discrete_operands.cpp): that unpacking
  // reads C as well, half a copy more per byte.
  const bool c_added = discrete && s.reads_c && s.packs_c();
  const double c_in = s.reads_c && !c_added ? e * r * n : 0, out = e * r * n;
  const double in = e * (r * k + k * n) + c_in;
  if (discrete) {
    p.in = bus_in > 0 ? in / bus_in : kInf;
    p.out = bus_out > 0 ? out / bus_out : kInf;
  }
  const double b_elsewhere = (1 - std::clamp(b_packed, 0.0, 1.0)) * e * k * n;
  const double packed = (s.packs_a() ? e * r * k : 0) +
                        (s.packs_b() ? e * k * n - b_elsewhere : 0) +
                        (s.packs_c() ? c_in + out * (c_added ? 1.5 : 1) : 0);
  if (packed > 0) {
    // A unified device's share packs before the CPU share starts, on every core (the table's
    // last sample); a discrete device's feeders pack beside it.
    const double threads =
        discrete || pack_by_threads.empty() ? std::max(1, feeders) : pack_by_threads.back().x;
    const double rate = interpolate(pack_by_threads, threads);
    p.pack = rate > 0 ? packed / rate : kInf;
  }
  // Packing reads and writes each byte; the bus's copies read or write it once more.
  const double memory = pack_by_threads.empty() ? 0 : 2 * pack_by_threads.back().y;
  const double traffic = 2 * packed + (discrete ? in + out : 0);
  if (traffic > 0) p.memory = memory > 0 ? traffic / memory : kInf;
  return p;
}

double DeviceModel::seconds(const Shape& s, int64_t rows, int feeders, double b_packed) const {
  return rows > 0 ? seconds(parts(s, rows, feeders, b_packed)) : 0;
}

double DeviceModel::seconds(const Parts& p) const {
  const double longest = std::max({p.kernel, p.in, p.out, p.pack, p.memory});
  const double sum = p.kernel + p.in + p.out + p.pack + p.memory;
  return latency + longest + overlap * (sum - longest);
}

std::string Model::problem() const {
  const DeviceModel& d = device;
  if (cpu.gflops_by_threads.empty()) return "no CPU rates";
  for (const Sample& t : cpu.gflops_by_threads)
    if (!(t.x >= 1 && t.y > 0)) return "a CPU rate that is not positive";
  if (!(d.kernel_gflops > 0)) return "no kernel rate";
  if (d.discrete && !(d.bus_in > 0 && d.bus_out > 0)) return "no bus rates";
  if (d.pack_by_threads.empty()) return "no packing rates";
  for (const Sample& t : d.pack_by_threads)
    if (!(t.x >= 1 && t.y > 0)) return "a packing rate that is not positive";
  if (!(both_busy > 0 && both_busy <= 1 && cpu_busy > 0 && cpu_busy <= 1))
    return "a busy factor outside (0, 1]";
  if (!(d.overlap >= 0 && d.overlap <= 1)) return "overlap outside [0, 1]";
  if (!(cpu.half_m >= 0 && cpu.half_n >= 0 && cpu.half_k >= 0 && cpu.latency >= 0 &&
        d.launch >= 0 && d.latency >= 0 && d.chunk_from >= 0))
    return "a negative time, size or dimension";
  if (d.tile_m < 1 || d.tile_n < 1 || d.compute_units < 1 || d.chunk_fill < 0)
    return "a tile, compute units or chunk fill out of range";
  if (!(split_margin >= 0)) return "a negative split margin";
  return "";
}

double predict(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s,
               const std::vector<int64_t>& rows, int cpu_threads, int feeders) {
  int64_t taken = 0;
  bool any_device = false;
  for (int64_t r : rows) {
    taken += r;
    any_device = any_device || r > 0;
  }
  const int64_t cpu_rows = s.m - taken;
  const bool contended = any_device && cpu_rows > 0;
  double cpu_busy = 1, longest = 0, memory = 0;
  const std::vector<double> b_packed = b_parts(devices, s, rows);
  for (size_t i = 0; i < devices.size() && i < rows.size(); ++i) {
    if (rows[i] <= 0) continue;
    cpu_busy = std::min(cpu_busy, devices[i].cpu_busy);
    const DeviceModel::Parts p =
        devices[i].model->parts(devices[i].seen(s), rows[i], feeders, b_packed[i]);
    longest =
        std::max(longest, side_time(devices[i].model->seconds(p), contended, devices[i].both_busy));
    memory += p.memory;
  }
  // The devices' feeders share the host's memory: their traffic takes the sum of their times.
  longest = std::max(longest, memory);
  if (cpu_rows > 0)
    longest = std::max(longest, side_time(cpu.seconds(s, cpu_rows, std::max(1, cpu_threads)),
                                          contended, cpu_busy));
  return longest;
}

namespace {

// A discrete device keeps a host thread even with nothing to pack (it waits on the device); those
// that pack share the cores the CPU leaves.
struct Feeding {
  int discrete = 0, packing = 0;
};
Feeding feeding(const std::vector<Side>& devices, const Shape& s) {
  Feeding f;
  for (const Side& d : devices) {
    f.discrete += d.model->discrete ? 1 : 0;
    f.packing += d.model->discrete && d.model->feeds(d.seen(s)) ? 1 : 0;
  }
  return f;
}

}  // namespace

Plan best_split(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s, int cores,
                double limit) {
  cores = std::max(1, cores);
  const Feeding f = feeding(devices, s);
  Plan both{{}, 0, 0, 0, kInf};
  for (int threads : thread_counts(cores)) {
    if (threads > cores - f.discrete) continue;
    const int feeders = f.packing > 0 ? std::max(1, (cores - threads) / f.packing) : 0;
    Plan p = balance(cpu, devices, s, threads, feeders, limit);
    if (p.cpu_rows > 0 && p.cpu_rows < s.m && p.seconds < both.seconds) both = p;
  }
  return both;
}

Plan best_plan(const CpuModel& cpu, const std::vector<Side>& devices, const Shape& s, int cores,
               double margin) {
  cores = std::max(1, cores);
  Plan cpu_alone;
  cpu_alone.rows.assign(devices.size(), 0);
  cpu_alone.cpu_rows = s.m;
  cpu_alone.cpu_threads = cores;
  cpu_alone.seconds = cpu.seconds(s, s.m, cores);
  if (devices.empty() || s.m <= 0) return cpu_alone;
  // The devices alone, every core feeding those that pack.
  const Feeding f = feeding(devices, s);
  const int all_feed = f.packing > 0 ? std::max(1, cores / f.packing) : 0;
  const double limit = std::isfinite(cpu_alone.seconds) ? cpu_alone.seconds : 1e9;
  const Plan alone = balance(cpu, devices, s, 0, all_feed, 1e3 * limit);
  const Plan& single = alone.seconds < cpu_alone.seconds ? alone : cpu_alone;
  const Plan both = best_split(cpu, devices, s, cores, single.seconds);
  return both.seconds * (1 + margin) < single.seconds ? both : single;
}

}  // namespace tandem::detail::cost
