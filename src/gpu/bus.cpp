// How fast the host feeds a device: the bus's rate from pinned staging into a device buffer,
// measured once per device the first time a plan asks (the fastest of three 64 MiB writes after
// one that is not counted); and, for the co-tuner's cost model, the bus's rates both ways and
// how fast host threads pack ordinary memory into pinned staging.
#include <algorithm>
#include <mutex>
#include <vector>

#include "base/clock.hpp"
#include "gpu/device_cl.hpp"
#include "gpu/errors.hpp"
#include "gpu/host_pack.hpp"

namespace tandem::detail::gpu {
namespace {

constexpr size_t kBusBytes = size_t(64) << 20;
// Packing is timed on more than any cache holds, as a share's operands are.
constexpr size_t kPackBytes = size_t(256) << 20;

// The shortest of `runs` timings of f, after one that is not counted.
template <class F>
double shortest(int runs, F&& f) {
  double best = 0;
  for (int i = 0; i <= runs; ++i) {
    clock::Stopwatch watch;
    f();
    const double s = watch.seconds();
    if (i > 0 && (best == 0 || s < best)) best = s;
  }
  return best;
}

}  // namespace

double bus_bytes_per_second(Device& device) {
  std::call_once(device.bus_once(), [&] {
    try {
      auto st = device.staging().take(kBusBytes);
      cl::CommandQueue queue(device.context(), device.device());
      const double seconds = shortest(
          3, [&] { queue.enqueueWriteBuffer(st->device, CL_TRUE, 0, kBusBytes, st->mapped); });
      device.staging().give(std::move(st));
      device.set_bus_rate(static_cast<double>(kBusBytes) / seconds);
    } catch (const cl::Error&) {
      device.set_bus_rate(0);  // unknown: no plan relies on it
    }
  });
  return device.bus_rate();
}

FeedTimes time_feed(Device& device, const std::vector<int>& pack_threads) {
  FeedTimes t;
  t.bytes = static_cast<double>(kBusBytes);
  t.pack_bytes = static_cast<double>(kPackBytes);
  try {
    auto st = device.staging().take(kPackBytes);
    if (!device.info().unified_memory) {
      cl::CommandQueue queue(device.context(), device.device());
      t.in_seconds = shortest(
          3, [&] { queue.enqueueWriteBuffer(st->device, CL_TRUE, 0, kBusBytes, st->mapped); });
      t.out_seconds = shortest(
          3, [&] { queue.enqueueReadBuffer(st->device, CL_TRUE, 0, kBusBytes, st->mapped); });
    }
    // Ordinary memory, touched once so its pages exist, packed as a share packs its operands.
    std::vector<float> host(kPackBytes / sizeof(float), 1.0f);
    const int64_t cols = 4096, rows = static_cast<int64_t>(host.size()) / cols;
    for (int threads : pack_threads)
      t.pack_seconds.emplace_back(threads, shortest(3, [&] {
                                    pack(host.data(), rows, cols, cols,
                                         static_cast<float*>(st->mapped), threads);
                                  }));
    device.staging().give(std::move(st));
  } catch (const cl::Error& e) {
    throw translate(e, "measuring the bus and packing rates");
  }
  return t;
}

}  // namespace tandem::detail::gpu
