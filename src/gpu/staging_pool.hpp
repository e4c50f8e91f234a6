// Pooled staging for discrete devices: pinned host buffers mapped for their lifetime, each with a
// device buffer of the same size, reused across calls.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/cl.hpp"

namespace tandem::detail::gpu {

// A pinned host buffer, mapped once for its lifetime, and a device buffer of the same size.
struct Staging {
  cl::Buffer pinned, device;
  void* mapped = nullptr;
  size_t bytes = 0;
  bool host = true;  // false: a device buffer alone, for operands copied from pinned memory
};

class StagingPool {
 public:
  // Idle staging beyond `idle_cap` bytes is released.
  StagingPool(cl::Context context, cl::Device device, uint64_t idle_cap);

  // Staging of at least `bytes`, reused across calls: allocating and pinning it anew each call
  // cost more than the kernel on the H100 host (docs/PERFORMANCE.md). The smallest idle one that
  // fits, else a new one. Throws cl::Error.
  std::unique_ptr<Staging> take(size_t bytes, bool with_host = true);

  // Returns staging no command uses any more.
  void give(std::unique_ptr<Staging> st);

  // Keeps staging that a device might still read or write (its queues could not be drained) for
  // the life of the process, never freed or reused.
  void lose(std::unique_ptr<Staging> st);

 private:
  void release(Staging& st);

  cl::Context context_;
  cl::Device device_;
  uint64_t idle_cap_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Staging>> idle_;
  std::vector<std::unique_ptr<Staging>> lost_;
  uint64_t idle_bytes_ = 0;
};

}  // namespace tandem::detail::gpu
