// Dividing a call: its rows between the devices and the CPU, and the host's cores between the CPU
// share and the threads that feed discrete devices.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cpu_blas.hpp"
#include "plan.hpp"
#include "topology.hpp"

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

}  // namespace tandem::detail
