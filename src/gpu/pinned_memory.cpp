// tandem_malloc's pinned blocks: a registry of mapped CL_MEM_ALLOC_HOST_PTR buffers by the
// address the caller got.
#include "pinned_memory.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "after_fork.hpp"
#include "device_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// Pinned allocations handed out by pinned_alloc, by the address the caller got.
struct PinnedBlock {
  uintptr_t end = 0;
  std::shared_ptr<Device> device;
  cl::Buffer buffer;
  void* mapped = nullptr;
};

std::mutex& pinned_mutex() {
  static std::mutex& m = []() -> std::mutex& {
    auto* fresh = new std::mutex;  // never destroyed, like the device cache
    after_fork::hold(*fresh, after_fork::Rank::Pinned);
    return *fresh;
  }();
  return m;
}

std::map<uintptr_t, PinnedBlock>& pinned_blocks() {
  static auto& blocks = *new std::map<uintptr_t, PinnedBlock>;
  return blocks;
}

}  // namespace

bool in_pinned_block(const Device& device, const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto& blocks = pinned_blocks();
  auto it = blocks.upper_bound(begin);
  if (it == blocks.begin()) return false;
  --it;
  // Pinned in the device's context, which is its platform's: every device of the platform
  // copies such a block without packing.
  return it->second.device->context()() == device.context()() && begin + bytes <= it->second.end;
}

void* pinned_alloc(const std::shared_ptr<Device>& device, size_t bytes) {
  constexpr size_t kPage = 4096;
  if (bytes == 0 || bytes > SIZE_MAX - 2 * kPage) return nullptr;
  try {
    PinnedBlock block;
    block.device = device;
    const size_t size = (bytes + kPage - 1) / kPage * kPage + kPage;  // room to page-align
    block.buffer = cl::Buffer(device->context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size);
    // One of the device's reused queues: making a queue per block is a cost of its own.
    cl::CommandQueue q = device->take_queue();
    block.mapped = q.enqueueMapBuffer(block.buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size);
    device->give_queue(std::move(q));
    const uintptr_t base = reinterpret_cast<uintptr_t>(block.mapped);
    const uintptr_t aligned = (base + kPage - 1) / kPage * kPage;
    block.end = aligned + bytes;
    std::lock_guard<std::mutex> lock(pinned_mutex());
    pinned_blocks().emplace(aligned, std::move(block));
    return reinterpret_cast<void*>(aligned);
  } catch (const cl::Error&) {
    return nullptr;  // the caller falls back to ordinary memory
  }
}

bool pinned_free(void* p) {
  PinnedBlock block;
  {
    std::lock_guard<std::mutex> lock(pinned_mutex());
    auto it = pinned_blocks().find(reinterpret_cast<uintptr_t>(p));
    if (it == pinned_blocks().end()) return false;
    block = std::move(it->second);
    pinned_blocks().erase(it);
  }
  if (after_fork::opencl_lost()) {
    // The parent's block, in a forked child: OpenCL may not be called here, so it is left as it
    // is (after_fork.hpp), and so are its OpenCL objects.
    new PinnedBlock(std::move(block));
    return true;
  }
  try {
    cl::CommandQueue q = block.device->take_queue();
    q.enqueueUnmapMemObject(block.buffer, block.mapped);
    q.finish();
    block.device->give_queue(std::move(q));
  } catch (const cl::Error&) {
    // Released with the buffer below either way.
  }
  return true;
}

}  // namespace tandem::detail::gpu
