// The seam settings (src/base/seams.hpp) the tests use, for a scope at a time through
// detail::seams::Override: PoCL playing a discrete device, every share cut into chunks, every
// tandem_malloc block pinned or none.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seam_override.hpp"

namespace tandem::test {

// A pinning threshold no block reaches: tandem_malloc memory is then ordinary memory, which a
// discrete share packs (the library pins blocks from a page up; pinned_memory_test covers that).
constexpr size_t kNothingPinned = size_t{1} << 40;

// A discrete device whose tandem_malloc blocks are all pinned (pin_every_block) or none.
inline detail::seams::Values discrete(bool chunk_every_share = false,
                                      bool pin_every_block = false) {
  detail::seams::Values v;
  v.assume_discrete = true;
  if (chunk_every_share) v.overlap_from = 0;
  v.pinned_from = pin_every_block ? 0 : kNothingPinned;
  return v;
}

// The paths a share takes a kernel on, for the kernel tests: in place on a unified device, staged
// there from operands one element off alignment (offset 1), and on a discrete device (played by
// PoCL; on a GPU host, the GPU itself) with every share cut into chunks, from ordinary memory and
// from pinned memory (every tandem_malloc block pinned).
struct SharePath {
  const char* name;
  bool discrete, pinned;
  int64_t offset;
  detail::seams::Values seams() const {
    return discrete ? test::discrete(true, pinned) : detail::seams::Values{};
  }
};
inline constexpr SharePath kSharePaths[] = {{"unified", false, false, 0},
                                            {"unified_misaligned", false, false, 1},
                                            {"discrete", true, false, 0},
                                            {"discrete_pinned", true, true, 0}};

}  // namespace tandem::test
