// tandem_malloc / tandem_free: page-aligned, 64-byte-padded memory for zero-copy operands.
#include <cstdlib>

#include "tandem/tandem.h"

extern "C" void* tandem_malloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  constexpr size_t kAlign = 4096, kPad = 64;
  if (bytes > SIZE_MAX - kAlign) return nullptr;
  // aligned_alloc wants a size that is a multiple of the alignment; that also covers the padding.
  const size_t size = (bytes + kAlign - 1) / kAlign * kAlign;
  static_assert(kAlign % kPad == 0, "page padding covers the 64-byte padding");
  return std::aligned_alloc(kAlign, size);
}

extern "C" void tandem_free(void* p) { std::free(p); }
