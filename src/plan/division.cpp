// Dividing a call: its rows between the devices and the CPU, a device's rows into launches, and
// the host's cores between the CPU share and the threads that feed discrete devices.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/precision.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "plan/plan.hpp"
#include "profile/defaults.hpp"

namespace tandem::detail {

int host_cores() { return std::min(topology::physical_cores(), cpu_blas::current_threads()); }

int64_t gpu_rows(double fraction, int64_t m, int64_t tile) {
  if (fraction <= 0.0 || m <= 0) return 0;
  if (fraction >= 1.0) return m;
  const int64_t rows = std::llround(fraction * static_cast<double>(m));
  if (tile > 1) {
    const int64_t rounded =
        std::llround(static_cast<double>(rows) / static_cast<double>(tile)) * tile;
    if (rounded > 0 && rounded < m) return rounded;
  }
  return std::clamp<int64_t>(rows, 0, m);
}

std::vector<int64_t> split_rows(double fraction, int64_t m, const std::vector<double>& weights,
                                const std::vector<int64_t>& tiles) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> rows(weights.size(), 0);
  if (total <= 0) return rows;
  double cumulative = 0;
  int64_t end = 0;
  size_t last = 0;
  for (size_t i = 0; i < weights.size(); ++i)
    if (weights[i] > 0) last = i;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    cumulative += weights[i];
    const double f = i == last ? fraction : fraction * cumulative / total;
    const int64_t boundary = std::max(end, gpu_rows(f, m, tiles[i]));
    rows[i] = boundary - end;
    end = boundary;
  }
  return rows;
}

// Threads that feed discrete devices come first; beside a device that needs no feeding one core is
// left to the thread that waits on it.
Cores divide_cores(const Options& o, const std::vector<bool>& feeds,
                   const std::vector<bool>& pinned, bool cpu_rows, bool gpu_share,
                   int profile_threads) {
  const int cores = host_cores();
  Cores c;
  c.total = cores;
  c.feeders.assign(feeds.size(), 0);
  const int feeding = static_cast<int>(std::count(feeds.begin(), feeds.end(), true));
  if (feeding == 0) {
    c.cpu_threads = o.cpu_threads.value_or(
        gpu_share && profile_threads > 0
            ? std::min(profile_threads, cores)
            : std::max(1, cores - (gpu_share && o.reserve_feeder_core && cores > 1 ? 1 : 0)));
    return c;
  }
  // What the feeders get: all the cores when the devices have every row; else the profile's
  // co-tuned division, the options', or half the cores (one thread for a device whose operands
  // need no packing); never so many that the CPU share is left nothing.
  int budget = cores;
  if (cpu_rows) {
    if (profile_threads > 0 && !o.feeder_threads)
      budget = cores - std::min(profile_threads, cores - 1);
    else
      budget = std::min(cores - 1,
                        o.feeder_threads ? *o.feeder_threads * feeding : std::max(1, cores / 2));
    budget = std::max(budget, 1);
  }
  int given = 0;
  for (size_t i = 0, k = 0; i < feeds.size(); ++i) {
    if (!feeds[i]) continue;
    const int share = budget / feeding + (static_cast<int>(k++) < budget % feeding ? 1 : 0);
    c.feeders[i] = std::max(1, cpu_rows && pinned[i] && !o.feeder_threads ? 1 : share);
    given += c.feeders[i];
  }
  const int left = std::max(1, cores - given);
  c.cpu_threads = std::min(left, o.cpu_threads.value_or(left));
  return c;
}

// Bounds a part's kernel launches (LAUNCH_ROWS, unless the caller set it) so that none is planned
// to run longer than the data's bound at `gflops`, the device's measured kernel rate (else the
// rate the data assumes): a display GPU's watchdog kills a kernel that runs for seconds. A
// launch's time is its work-groups' (whole tiles of rows and columns, each over all of k), a wave
// of one per compute unit at a time: so a call of a few rows and columns with a long k, which
// fills one work-group, is as slow as the tile it pads out to on one compute unit. False where
// even one row of tiles would run longer than the bound: such a part is too long for the device
// (the plan gives its rows to the CPU, but under strategy gpu, where it runs a row of tiles at a
// time).
template <class T>
bool bound_launches(DevicePart& part, const Problem<T>& p, const Options& o, double gflops) {
  if (o.kernel_params.count("LAUNCH_ROWS")) return true;
  const profile::LaunchBound& bound = profile::launch_bound();
  const double rate = (gflops > 0 ? gflops : bound.assumed_gflops) * 1e9;
  const int64_t mwg = gpu::row_tile(*part.params), nwg = gpu::col_tile(*part.params);
  const double units = std::max(1, gpu::info(*part.device).compute_units);
  const double group_seconds = flops_per_multiply_add(precision_of<T>()) *
                               static_cast<double>(mwg) * static_cast<double>(nwg) *
                               static_cast<double>(std::max<int64_t>(p.k, 1)) / (rate / units);
  const double col_groups = std::ceil(static_cast<double>(p.n) / static_cast<double>(nwg));
  // Rows of tiles a launch may hold: whole waves within the bound.
  const double waves = std::floor(bound.max_seconds / group_seconds);
  const double tile_rows = std::floor(waves * units / col_groups);
  const bool fits = tile_rows >= 1;
  const double rows = std::max(1.0, tile_rows) * static_cast<double>(mwg);
  const int launch_rows = rows >= static_cast<double>(p.m) ? 0 : static_cast<int>(rows);
  // The resolved set is shared: a bound of its own is a copy (a call too long for one launch).
  const auto it = part.params->find("LAUNCH_ROWS");
  if (it != part.params->end() && it->second == launch_rows) return fits;
  auto bounded = std::make_shared<gpu::Params>(*part.params);
  (*bounded)["LAUNCH_ROWS"] = launch_rows;
  part.params = std::move(bounded);
  return fits;
}

#define INSTANTIATE(T) \
  template bool bound_launches<T>(DevicePart&, const Problem<T>&, const Options&, double);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail
