// Calibrating a discrete device's feed from ordinary memory (feed.hpp): shares of the device alone,
// timed here, once per device and precision.
#include "gpu/feed.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/seams.hpp"
#include "gpu/share.hpp"
#include "model/chunks.hpp"

namespace tandem::detail::gpu {

double moved_bytes(double m, double n, double k, bool reads_c, bool adds_c, size_t element) {
  const double c_times = reads_c ? (adds_c ? 1.5 : 2.0) : 1.0;
  return (m * k + k * n + m * n * c_times) * static_cast<double>(element);
}

namespace {

// The fastest of three device-alone shares of C (n x n) += A B (n x n x n) from ordinary memory,
// after one not counted: the share's time less its kernel's, and the kernel's; none if it failed.
struct Timing {
  double feed = 0, kernel = 0;
  bool ok = false;
};
template <class T>
Timing fastest_feed(const std::shared_ptr<Device>& device, const KernelFor& kernel_for, int threads,
                    int64_t n) {
  std::vector<T> a(static_cast<size_t>(n * n), T(1)), b(a), c(a);
  const Share<T> s{false, false, n, n, n, T(1), a.data(), n, b.data(), n, T(1), c.data(), n};
  const SharedParams params = kernel_for(n);
  Timing best;
  for (int i = 0; i < 4; ++i) {
    // Shares on a device whose driver cannot run two at once take turns with the calls'.
    const auto turn = exclusive_for({device});
    const int64_t start = clock::now_ns();
    auto share = enqueue(*device, params, s);
    share->flush();
    share->feed(threads);
    share->wait();
    const double seconds = static_cast<double>(clock::now_ns() - start) * 1e-9;
    const double feed = std::max(0.0, seconds - share->kernel_seconds);
    if (i > 0 && (!best.ok || feed < best.feed)) best = {feed, share->kernel_seconds, true};
  }
  return best;
}

template <class T>
FeedCost measure(const std::shared_ptr<Device>& device, const KernelFor& kernel_for, int threads) {
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
  while (cost::one_chunk(operands(largest_single + 64), seams::overlap_from()))
    largest_single += 64;
  const int64_t large = largest_single * 3 / 2;
  try {
    const auto time = [&](int64_t n) { return fastest_feed<T>(device, kernel_for, threads, n); };
    Timing t_small, t_one, t_large;
    int64_t far = 0;
    double t_far = 0;
    // A host busy with other work can make the larger call's feed look no slower than the small
    // one's: that pair says nothing, and is timed again (three tries, then the feed is unknown).
    for (int attempt = 0; attempt < 3; ++attempt) {
      t_small = time(small);
      t_one = largest_single > small ? time(largest_single) : Timing{};
      t_large = time(large);
      if (!t_small.ok || !t_large.ok || (largest_single > small && !t_one.ok)) return {};
      // A line through the small call and the largest of one chunk (through the small and the
      // large call where every call is pipelined, as under a seam that chunks every share).
      far = t_one.ok ? largest_single : large;
      t_far = t_one.ok ? t_one.feed : t_large.feed;
      if (t_far > t_small.feed) break;
    }
    if (t_far <= t_small.feed) return {};
    FeedCost f;
    f.adds_c = true;
    f.bytes_per_second = (moved(far) - moved(small)) / (t_far - t_small.feed);
    f.seconds = std::max(0.0, t_small.feed - moved(small) / f.bytes_per_second);
    if (t_one.ok)
      f.pipelined_bytes_per_second = moved(large) / std::max(t_large.feed - f.seconds, 1e-9);
    const double n = static_cast<double>(large);
    if (t_large.kernel > 0)
      f.kernel_gflops =
          flops_per_multiply_add(precision_of<T>()) * n * n * n / t_large.kernel * 1e-9;
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
std::map<std::pair<int, Precision>, std::unique_ptr<Entry>>& entries() {
  static auto& e = *new std::map<std::pair<int, Precision>, std::unique_ptr<Entry>>;
  return e;
}

}  // namespace

template <class T>
FeedCost ordinary_feed(const std::shared_ptr<Device>& device, const KernelFor& kernel_for,
                       int feeder_threads) {
  if (seams::feed_rate() > 0) return {seams::feed_seconds(), seams::feed_rate(), 0, 0, true};
  const DeviceInfo& di = info(*device);
  Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(entries_mutex());
    auto& slot = entries()[{di.index, precision_of<T>()}];
    if (!slot) slot = std::make_unique<Entry>();
    entry = slot.get();
  }
  std::call_once(entry->once, [&] {
    entry->feed = measure<T>(device, kernel_for, feeder_threads);
    if (!env_config().verbose) return;
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s feed from ordinary memory to %s: %.3f ms a call, %.1f GB/s in one chunk, "
                  "%.1f GB/s pipelined, kernel %.0f GFLOPS",
                  routine_name(precision_of<T>(), "gemm").c_str(), di.describe().c_str(),
                  entry->feed.seconds * 1e3, entry->feed.bytes_per_second * 1e-9,
                  entry->feed.pipelined_bytes_per_second * 1e-9, entry->feed.kernel_gflops);
    log_line(line);
  });
  return entry->feed;
}

#define INSTANTIATE(T) \
  template FeedCost ordinary_feed<T>(const std::shared_ptr<Device>&, const KernelFor&, int);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem::detail::gpu
