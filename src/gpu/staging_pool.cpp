// The staging pool of a discrete device: whole-MiB buffers, the smallest idle fit first, and a
// cap on what idles.
#include "staging_pool.hpp"

#include <algorithm>

namespace tandem::detail::gpu {

StagingPool::StagingPool(cl::Context context, cl::Device device, uint64_t idle_cap)
    : context_(std::move(context)), device_(std::move(device)), idle_cap_(idle_cap) {}

std::unique_ptr<Staging> StagingPool::take(size_t bytes, bool with_host) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it)
      if ((*it)->host == with_host && (*it)->bytes >= bytes &&
          (best == idle_.end() || (*it)->bytes < (*best)->bytes))
        best = it;
    // A buffer more than twice the need would tie up memory another call could use.
    if (best != idle_.end() && (*best)->bytes <= 2 * bytes + (1u << 20)) {
      auto st = std::move(*best);
      idle_.erase(best);
      idle_bytes_ -= st->bytes;
      return st;
    }
  }
  auto st = std::make_unique<Staging>();
  st->bytes = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);  // whole MiB, to reuse well
  st->host = with_host;
  st->device = cl::Buffer(context_, CL_MEM_READ_WRITE, st->bytes);
  if (with_host) {
    st->pinned = cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, st->bytes);
    cl::CommandQueue q(context_, device_);
    st->mapped = q.enqueueMapBuffer(st->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, st->bytes);
  }
  return st;
}

void StagingPool::give(std::unique_ptr<Staging> st) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_bytes_ += st->bytes;
  idle_.push_back(std::move(st));
  // Largest first: the mapped pinned buffer is released with it.
  while (idle_bytes_ > idle_cap_ && !idle_.empty()) {
    auto largest = std::max_element(idle_.begin(), idle_.end(), [](const auto& x, const auto& y) {
      return x->bytes < y->bytes;
    });
    idle_bytes_ -= (*largest)->bytes;
    idle_.erase(largest);
  }
}

}  // namespace tandem::detail::gpu
