// How fast the host's bus moves data to a discrete device: measured once per device, the first
// time a plan asks, as the fastest of three 64 MiB writes from pinned staging into a device buffer
// (the path the discrete share's operands take), after one write that is not counted.
#include <algorithm>
#include <mutex>

#include "clock.hpp"
#include "device_cl.hpp"
#include "errors.hpp"

namespace tandem::detail::gpu {

double bus_bytes_per_second(Device& device) {
  std::call_once(device.bus_once(), [&] {
    constexpr size_t kBytes = size_t(64) << 20;
    try {
      auto st = device.staging().take(kBytes);
      cl::CommandQueue queue(device.context(), device.device());
      double best = 0;
      for (int i = 0; i < 4; ++i) {
        clock::Stopwatch watch;
        queue.enqueueWriteBuffer(st->device, CL_TRUE, 0, kBytes, st->mapped);
        if (i > 0) best = std::max(best, static_cast<double>(kBytes) / watch.seconds());
      }
      device.staging().give(std::move(st));
      device.set_bus_rate(best);
    } catch (const cl::Error&) {
      device.set_bus_rate(0);  // unknown: no plan relies on it
    }
  });
  return device.bus_rate();
}

}  // namespace tandem::detail::gpu
