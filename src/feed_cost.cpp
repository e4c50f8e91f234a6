// The feed of a discrete device (feed_cost.hpp): the rule, and the measurement from ordinary
// memory.
#include "feed_cost.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "config.hpp"
#include "executor.hpp"
#include "gpu/device.hpp"
#include "log.hpp"
#include "seams.hpp"

namespace tandem::detail {

template <class T>
double moved_bytes(const Problem<T>& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  return (m * k + k * n + m * n * (p.beta != T(0) ? 2 : 1)) * sizeof(T);
}

template <class T>
double cpu_gflops_for(const Problem<T>& p, double square_gflops, int64_t size, double half) {
  const double narrow = static_cast<double>(std::min(p.m, p.n)), square = static_cast<double>(size);
  if (size <= 0 || half <= 0 || narrow >= square) return square_gflops;
  return square_gflops * (narrow / (narrow + half)) / (square / (square + half));
}

template <class T>
bool device_loses_to_cpu(const Problem<T>& p, const FeedCost& feed, double device_gflops,
                         double cpu_gflops) {
  if (!feed.known() || cpu_gflops <= 0) return false;
  const double flops =
      2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  const double device_seconds = feed.seconds + moved_bytes(p) / feed.bytes_per_second +
                                (device_gflops > 0 ? flops / (device_gflops * 1e9) : 0.0);
  return device_seconds >= flops / (cpu_gflops * 1e9);
}

namespace {

// The fastest of three device-alone calls of C (n x n) += A B (n x n x n) from ordinary memory,
// after one not counted, each less its kernel's time; 0 if the device did not compute every row.
template <class T>
double fastest_feed(const gpu::DeviceInfo& info, int64_t n) {
  std::vector<T> a(static_cast<size_t>(n * n), T(1)), b(a), c(a);
  const Problem<T> p{false, false, n, n, n, T(1), a.data(), n, b.data(), n, T(1), c.data(), n};
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = std::to_string(info.index);
  double best = 0;
  for (int i = 0; i < 4; ++i) {
    Report r;
    execute(p, o, r);
    if (r.fell_back || r.gpu_rows != n) return 0;
    const double feed = std::max(0.0, r.seconds() - r.gpu_kernel_seconds);
    if (i > 0 && (best == 0 || feed < best)) best = feed;
  }
  return best;
}

template <class T>
FeedCost measure(const gpu::DeviceInfo& info) {
  constexpr int64_t small = 256, large = 1024;
  auto bytes = [](int64_t n) {
    return 4.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(T);
  };
  try {
    const double t_small = fastest_feed<T>(info, small), t_large = fastest_feed<T>(info, large);
    if (t_small <= 0 || t_large <= t_small) return {};
    FeedCost f;
    f.bytes_per_second = (bytes(large) - bytes(small)) / (t_large - t_small);
    f.seconds = std::max(0.0, t_small - bytes(small) / f.bytes_per_second);
    return f;
  } catch (const std::exception&) {
    return {};  // the call that asked meets the failure itself, and falls back as it says
  }
}

// One measurement per device (by its place in list_devices() and its name) and precision.
struct Entry {
  std::once_flag once;
  FeedCost feed;
};
std::mutex& entries_mutex() {
  static std::mutex& m = *new std::mutex;  // never destroyed: calls may plan until exit
  return m;
}
std::map<std::pair<std::string, bool>, std::unique_ptr<Entry>>& entries() {
  static auto& e = *new std::map<std::pair<std::string, bool>, std::unique_ptr<Entry>>;
  return e;
}

}  // namespace

template <class T>
FeedCost ordinary_feed(gpu::Device& device) {
  if (seams::feed_rate() > 0) return {seams::feed_seconds(), seams::feed_rate()};
  const gpu::DeviceInfo& info = gpu::info(device);
  Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(entries_mutex());
    auto& slot =
        entries()[{std::to_string(info.index) + " " + info.describe(), std::is_same_v<T, double>}];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
  }
  std::call_once(entry->once, [&] {
    entry->feed = measure<T>(info);
    if (!env_config().verbose) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s feed from ordinary memory to %s: %.3f ms a call, %.1f GB/s",
                  std::is_same_v<T, double> ? "dgemm" : "sgemm", info.describe().c_str(),
                  entry->feed.seconds * 1e3, entry->feed.bytes_per_second * 1e-9);
    log_line(line);
  });
  return entry->feed;
}

#define TANDEM_FEED(T)                                                                      \
  template double moved_bytes<T>(const Problem<T>&);                                        \
  template double cpu_gflops_for<T>(const Problem<T>&, double, int64_t, double);            \
  template bool device_loses_to_cpu<T>(const Problem<T>&, const FeedCost&, double, double); \
  template FeedCost ordinary_feed<T>(gpu::Device&);
TANDEM_FEED(float)
TANDEM_FEED(double)
#undef TANDEM_FEED

}  // namespace tandem::detail
