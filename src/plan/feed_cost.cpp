// Auto's feed rule (feed_cost.hpp).
#include "plan/feed_cost.hpp"

#include <algorithm>

#include "base/precision.hpp"
#include "base/seams.hpp"
#include "model/chunks.hpp"
#include "plan/candidates.hpp"
#include "plan/plan.hpp"

namespace tandem::detail {

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
  const double flops = flops_per_multiply_add(precision_of<T>()) * m * n * k;
  const bool pipelined =
      !cost::one_chunk((m * k + k * n + m * n) * sizeof(T), seams::overlap_from());
  const double rate = pipelined && feed.pipelined_bytes_per_second > 0
                          ? feed.pipelined_bytes_per_second
                          : feed.bytes_per_second;
  const double moved = gpu::moved_bytes(m, n, k, p.beta != T(0), feed.adds_c, sizeof(T));
  const double device_seconds = feed.seconds + moved / rate +
                                (feed.kernel_gflops > 0 ? flops / (feed.kernel_gflops * 1e9) : 0.0);
  return device_seconds >= flops / (cpu_gflops * 1e9);
}

template <class T>
FeedCost ordinary_feed(const std::shared_ptr<gpu::Device>& device) {
  return gpu::ordinary_feed<T>(
      device, [&](int64_t n) { return kernel_alone<T>(device, n); }, host_cores());
}

#define TANDEM_FEED(T)                                                              \
  template double cpu_gflops_for<T>(const Problem<T>&, double, int64_t, double);    \
  template bool device_loses_to_cpu<T>(const Problem<T>&, const FeedCost&, double); \
  template FeedCost ordinary_feed<T>(const std::shared_ptr<gpu::Device>&);
TANDEM_FOR_EACH_ELEMENT(TANDEM_FEED)
#undef TANDEM_FEED

}  // namespace tandem::detail
