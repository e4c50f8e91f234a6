// The staging pool of a discrete device: whole-MiB buffers, the smallest idle fit first, and a
// cap on what idles.
#include "gpu/staging_pool.hpp"

#include <algorithm>

namespace tandem::detail::gpu {

StagingPool::StagingPool(cl::Context context, cl::Device device, uint64_t idle_cap)
    : context_(std::move(context)), device_(std::move(device)), idle_cap_(idle_cap) {}

// Whole MiB, rounded up to the next of 4 classes per doubling (at most 19% more than asked), so
// that a run of calls whose sizes creep upward, as a factorization's products do, reuses one
// buffer rather than pinning a new one each call: rounded to whole MiB alone, reference LAPACK's
// dpotrf at 16384 pinned a new buffer of up to 512 MiB for every product and took 45 s, not 5
// (docs/PERFORMANCE.md).
size_t staging_size(size_t bytes) {
  constexpr size_t kMiB = size_t(1) << 20;
  size_t mib = std::max<size_t>(1, (bytes + kMiB - 1) / kMiB);
  for (size_t c = 1;; c *= 2) {
    if (c >= mib) return c * kMiB;
    for (size_t step : {c + c / 4, c + c / 2, c + 3 * c / 4})
      if (step >= mib && step > c) return step * kMiB;
  }
}

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
  st->bytes = staging_size(bytes);
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
  std::vector<std::unique_ptr<Staging>> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(st));
    idle_bytes_ += idle_.back()->bytes;
    // Largest first.
    while (idle_bytes_ > idle_cap_ && !idle_.empty()) {
      auto largest = std::max_element(idle_.begin(), idle_.end(), [](const auto& x, const auto& y) {
        return x->bytes < y->bytes;
      });
      idle_bytes_ -= (*largest)->bytes;
      evicted.push_back(std::move(*largest));
      idle_.erase(largest);
    }
  }
  for (auto& e : evicted) release(*e);
}

void StagingPool::lose(std::unique_ptr<Staging> st) {
  if (!st) return;
  std::lock_guard<std::mutex> lock(mutex_);
  lost_.push_back(std::move(st));
}

// A pinned buffer is unmapped before it goes: released while mapped, NVIDIA's driver kept its
// page-locked memory (the pool grew to 122 GB of it on the H100 host while the sizes it was asked
// for kept changing, and the process was killed: docs/PERFORMANCE.md).
void StagingPool::release(Staging& st) {
  if (st.mapped == nullptr) return;
  try {
    cl::CommandQueue q(context_, device_);
    q.enqueueUnmapMemObject(st.pinned, st.mapped);
    q.finish();
  } catch (const cl::Error&) {
    // The buffer goes anyway; nothing more can be done for its mapping.
  }
  st.mapped = nullptr;
}

}  // namespace tandem::detail::gpu
