// tandem_malloc / tandem_free: page-aligned, 64-byte-padded memory for zero-copy operands on a
// unified-memory device; pinned (page-locked) memory from the device on a discrete GPU, which
// the GPU copies at the bus's full speed with no packing.
#include <cstdlib>

#include "base/config.hpp"
#include "base/seams.hpp"
#include "gpu/device.hpp"
#include "gpu/pinned_memory.hpp"
#include "tandem/tandem.h"

namespace {

// Pinned memory from the device calls will use (TANDEM_DEVICE, else the first GPU) if that
// device is discrete; nullptr otherwise, or if it has none to give.
void* pinned(size_t bytes) {
  using namespace tandem;
  const auto& env = detail::env_config();
  if (env.strategy == Strategy::Cpu) return nullptr;  // OpenCL is never opened then
  try {
    auto device = detail::gpu::open_device(env.device.value_or(""));
    if (!detail::gpu::is_discrete(*device)) return nullptr;
    return detail::gpu::pinned_alloc(device, bytes);
  } catch (...) {
    // Nothing may leave a C function; the memory comes from the host instead, and the first call
    // that opens the device reports what is wrong with it.
    return nullptr;
  }
}

}  // namespace

extern "C" void* tandem_malloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  // Smaller arrays are not worth pinning: they are copied in no time.
  if (bytes >= tandem::detail::seams::pinned_from())
    if (void* p = pinned(bytes)) return p;
  constexpr size_t kAlign = 4096, kPad = 64;
  if (bytes > SIZE_MAX - kAlign) return nullptr;
  // aligned_alloc wants a size that is a multiple of the alignment; that also covers the padding.
  const size_t size = (bytes + kAlign - 1) / kAlign * kAlign;
  static_assert(kAlign % kPad == 0, "page padding covers the 64-byte padding");
  return std::aligned_alloc(kAlign, size);
}

extern "C" void tandem_free(void* p) {
  if (p == nullptr) return;
  if (tandem::detail::gpu::pinned_free(p)) return;
  std::free(p);
}
