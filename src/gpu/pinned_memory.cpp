// tandem_malloc's pinned blocks: a registry of mapped CL_MEM_ALLOC_HOST_PTR buffers by the
// address the caller got, and an arena that cuts small blocks out of such buffers.
//
// Pinning a buffer of its own (the driver's page-locked allocation, its mapping, and the reverse
// at free) took 1.0-1.7 ms a block on the H100 host whatever its size, from 64 KiB to 1 MiB
// (docs/PERFORMANCE.md, "small tandem_malloc blocks pinned"). A block that small is copied in tens
// of microseconds, so a program that allocates per call would lose by pinning it, and one that
// allocates once and calls in a loop would lose by not pinning it: from ordinary memory an sgemm
// 256^3 is packed on the host, and the call took 182-196 us against 94-108 pinned. So blocks
// below kOwnBlockFrom come from slabs of kSlab bytes, each cut into blocks of one power-of-two
// size, which go back to their slab's free list when freed and are reused; slabs stay pinned
// for the life of the process. Blocks from kOwnBlockFrom up get a buffer of their own.
#include "gpu/pinned_memory.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "base/after_fork.hpp"
#include "gpu/device_cl.hpp"

namespace tandem::detail::gpu {
namespace {

// Pinned allocations handed out by pinned_alloc, by the address the caller got.
struct PinnedBlock {
  uintptr_t end = 0;
  std::shared_ptr<Device> device;
  cl::Buffer buffer;
  void* mapped = nullptr;
  bool slab = false;  // the arena's: never released (its first block shares its address)
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

constexpr size_t kPage = 4096;
constexpr size_t kOwnBlockFrom = size_t{1} << 20;  // from here up, a pinned buffer of its own
constexpr size_t kSlab = size_t{4} << 20;          // the arena's buffers

// The arena's blocks, under pinned_mutex(): those free, by device and size, and those handed
// out, with their device and size.
struct Arena {
  std::map<std::pair<const Device*, size_t>, std::vector<uintptr_t>> idle;
  std::map<uintptr_t, std::pair<const Device*, size_t>> lent;
};

Arena& arena() {
  static auto& a = *new Arena;  // never destroyed, like the registry
  return a;
}

// A pinned buffer of its own, registered; its page-aligned address, or 0.
uintptr_t pin_block(const std::shared_ptr<Device>& device, size_t bytes, bool slab = false) {
  if (bytes == 0 || bytes > SIZE_MAX - 2 * kPage) return 0;
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
    block.slab = slab;
    std::lock_guard<std::mutex> lock(pinned_mutex());
    pinned_blocks().emplace(aligned, std::move(block));
    return aligned;
  } catch (const cl::Error&) {
    return 0;  // the caller falls back to ordinary memory
  }
}

// A block of `size` (a power of two from kPage, below kSlab) from the arena, or 0.
uintptr_t arena_block(const std::shared_ptr<Device>& device, size_t size) {
  const auto key = std::make_pair(static_cast<const Device*>(device.get()), size);
  {
    std::lock_guard<std::mutex> lock(pinned_mutex());
    auto& idle = arena().idle[key];
    if (!idle.empty()) {
      const uintptr_t p = idle.back();
      idle.pop_back();
      arena().lent[p] = key;
      return p;
    }
  }
  // A new slab, pinned outside the lock (it takes a millisecond), cut into blocks of this size.
  const uintptr_t slab = pin_block(device, kSlab, /*slab=*/true);
  if (slab == 0) return 0;
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto& idle = arena().idle[key];
  for (uintptr_t p = slab + kSlab - size; p > slab; p -= size) idle.push_back(p);
  arena().lent[slab] = key;
  return slab;
}

// The size class of a small block: the power of two at least `bytes`, and at least a page.
size_t size_class(size_t bytes) {
  size_t size = kPage;
  while (size < bytes) size *= 2;
  return size;
}

}  // namespace

bool any_pinned_block() {
  std::lock_guard<std::mutex> lock(pinned_mutex());
  return !pinned_blocks().empty();
}

const void* pinned_context(const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(pinned_mutex());
  auto& blocks = pinned_blocks();
  auto it = blocks.upper_bound(begin);
  if (it == blocks.begin()) return nullptr;
  --it;
  return begin + bytes <= it->second.end ? static_cast<const void*>(it->second.device->context()())
                                         : nullptr;
}

bool in_pinned_block(const Device& device, const void* p, size_t bytes) {
  // Pinned in the device's context, which is its platform's: every device of the platform
  // copies such a block without packing.
  const void* context = pinned_context(p, bytes);
  return context != nullptr && context == static_cast<const void*>(device.context()());
}

void* pinned_alloc(const std::shared_ptr<Device>& device, size_t bytes) {
  if (bytes == 0) return nullptr;
  const uintptr_t p =
      bytes < kOwnBlockFrom ? arena_block(device, size_class(bytes)) : pin_block(device, bytes);
  return reinterpret_cast<void*>(p);
}

bool pinned_free(void* p) {
  PinnedBlock block;
  {
    std::lock_guard<std::mutex> lock(pinned_mutex());
    // An arena block goes back to its free list (a slab's first block has the slab's address).
    auto lent = arena().lent.find(reinterpret_cast<uintptr_t>(p));
    if (lent != arena().lent.end()) {
      arena().idle[lent->second].push_back(lent->first);
      arena().lent.erase(lent);
      return true;
    }
    auto it = pinned_blocks().find(reinterpret_cast<uintptr_t>(p));
    if (it == pinned_blocks().end()) return false;
    // A slab's first block freed twice: the slab's other blocks stay where they are.
    if (it->second.slab) return true;
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
