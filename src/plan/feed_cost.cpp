// The feed of a discrete device (feed_cost.hpp): the rule, and the measurement from ordinary
// memory.
#include "plan/feed_cost.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/config.hpp"
#include "base/log.hpp"
#include "base/seams.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "run/executor.hpp"

namespace tandem::detail {

namespace {

// Bytes a call moves between the host and a discrete device: A and B in, C out, and where C's old
// values count (reads_c), C in as well, or (adds_c, from ordinary memory) half as much again for
// the host adding them as it unpacks (gpu/discrete_operands.cpp).
double moved_bytes(double m, double n, double k, bool reads_c, bool adds_c, size_t element) {
  const double c_times = reads_c ? (adds_c ? 1.5 : 2.0) : 1.0;
  return (m * k + k * n + m * n * c_times) * static_cast<double>(element);
}

}  // namespace

template <class T>
double cpu_gflops_for(const Problem<T>& p, double square_gflops, int64_t size, double half) {
  const double narrow = static_cast<double>(std::min(p.m, p.n)), square = static_cast<double>(size);
  if (size <= 0 || half <= 0 || narrow >= square) return square_gflops;
  return square_gflops * (narrow / (narrow + half)) / (square / (square + half));
}

template <class T>
bool device_loses_to_cpu(const Problem<T>& p, const FeedCost& feed, double cpu_gflops) {
  if (!feed.known() || cpu_gflops <= 0) return false;
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n),
               k = static_cast<double>(p.k);
  const double flops = 2.0 * m * n * k;
  const bool pipelined =
      !gpu::one_chunk((m * k + k * n + m * n) * sizeof(T), seams::overlap_from());
  const double rate = pipelined && feed.pipelined_bytes_per_second > 0
                          ? feed.pipelined_bytes_per_second
                          : feed.bytes_per_second;
  const double moved = moved_bytes(m, n, k, p.beta != T(0), feed.adds_c, sizeof(T));
  const double device_seconds = feed.seconds + moved / rate +
                                (feed.kernel_gflops > 0 ? flops / (feed.kernel_gflops * 1e9) : 0.0);
  return device_seconds >= flops / (cpu_gflops * 1e9);
}

namespace {

// The fastest of three device-alone calls of C (n x n) += A B (n x n x n) from ordinary memory,
// after one not counted: the call's time less its kernel's, and the kernel's; none if the device
// did not compute every row.
struct Timing {
  double feed = 0, kernel = 0;
  bool ok = false;
};
template <class T>
Timing fastest_feed(const gpu::DeviceInfo& info, int64_t n) {
  std::vector<T> a(static_cast<size_t>(n * n), T(1)), b(a), c(a);
  const Problem<T> p{false, false, n, n, n, T(1), a.data(), n, b.data(), n, T(1), c.data(), n};
  // The GPU strategy: planning this call does not ask for the feed (only auto does), so the
  // measurement never waits on its own once_flag.
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = std::to_string(info.index);
  Timing best;
  for (int i = 0; i < 4; ++i) {
    Report r;
    execute(p, o, r);
    if (r.fell_back || r.gpu_rows != n) return {};
    const double feed = std::max(0.0, r.seconds() - r.gpu_kernel_seconds);
    if (i > 0 && (!best.ok || feed < best.feed)) best = {feed, r.gpu_kernel_seconds, true};
  }
  return best;
}

template <class T>
FeedCost measure(const gpu::DeviceInfo& info) {
  // Operands of a square call of order n: A, B and C (the share's bytes, as chunk_rows counts
  // them); and what its feed moves, beta = 1 from ordinary memory.
  auto operands = [](int64_t n) {
    return 3.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(T);
  };
  auto moved = [](int64_t n) {
    const double d = static_cast<double>(n);
    return moved_bytes(d, d, d, true, true, sizeof(T));
  };
  constexpr int64_t small = 256;
  int64_t largest_single = small;
  while (gpu::one_chunk(operands(largest_single + 64), seams::overlap_from())) largest_single += 64;
  const int64_t large = largest_single * 3 / 2;
  try {
    const Timing t_small = fastest_feed<T>(info, small);
    const Timing t_one = largest_single > small ? fastest_feed<T>(info, largest_single) : Timing{};
    const Timing t_large = fastest_feed<T>(info, large);
    if (!t_small.ok || !t_large.ok || (largest_single > small && !t_one.ok)) return {};
    // A line through the small call and the largest of one chunk (through the small and the
    // large call where every call is pipelined, as under a seam that chunks every share).
    const int64_t far = t_one.ok ? largest_single : large;
    const double t_far = t_one.ok ? t_one.feed : t_large.feed;
    if (t_far <= t_small.feed) return {};
    FeedCost f;
    f.adds_c = true;
    f.bytes_per_second = (moved(far) - moved(small)) / (t_far - t_small.feed);
    f.seconds = std::max(0.0, t_small.feed - moved(small) / f.bytes_per_second);
    if (t_one.ok)
      f.pipelined_bytes_per_second = moved(large) / std::max(t_large.feed - f.seconds, 1e-9);
    const double n = static_cast<double>(large);
    if (t_large.kernel > 0) f.kernel_gflops = 2.0 * n * n * n / t_large.kernel * 1e-9;
    return f;
  } catch (const std::exception&) {
    return {};  // the call that asked meets the failure itself, and falls back as it says
  }
}

// One measurement per device (by its place in list_devices(), which is fixed for the process)
// and precision.
struct Entry {
  std::once_flag once;
  FeedCost feed;
};
std::mutex& entries_mutex() {
  static std::mutex& m = *new std::mutex;  // never destroyed: calls may plan until exit
  return m;
}
std::map<std::pair<int, bool>, std::unique_ptr<Entry>>& entries() {
  static auto& e = *new std::map<std::pair<int, bool>, std::unique_ptr<Entry>>;
  return e;
}

}  // namespace

template <class T>
FeedCost ordinary_feed(gpu::Device& device) {
  if (seams::feed_rate() > 0) return {seams::feed_seconds(), seams::feed_rate(), 0, 0, true};
  const gpu::DeviceInfo& info = gpu::info(device);
  Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(entries_mutex());
    auto& slot = entries()[{info.index, std::is_same_v<T, double>}];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
  }
  std::call_once(entry->once, [&] {
    entry->feed = measure<T>(info);
    if (!env_config().verbose) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s feed from ordinary memory to %s: %.3f ms a call, %.1f GB/s in one chunk, "
                  "%.1f GB/s pipelined, kernel %.0f GFLOPS",
                  std::is_same_v<T, double> ? "dgemm" : "sgemm", info.describe().c_str(),
                  entry->feed.seconds * 1e3, entry->feed.bytes_per_second * 1e-9,
                  entry->feed.pipelined_bytes_per_second * 1e-9, entry->feed.kernel_gflops);
    log_line(line);
  });
  return entry->feed;
}

#define TANDEM_FEED(T)                                                              \
  template double cpu_gflops_for<T>(const Problem<T>&, double, int64_t, double);    \
  template bool device_loses_to_cpu<T>(const Problem<T>&, const FeedCost&, double); \
  template FeedCost ordinary_feed<T>(gpu::Device&);
TANDEM_FEED(float)
TANDEM_FEED(double)
#undef TANDEM_FEED

}  // namespace tandem::detail
