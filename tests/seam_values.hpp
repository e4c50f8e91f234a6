// The seam settings (src/seams.hpp) the tests use, for a scope at a time through
// detail::seams::Override: PoCL playing a discrete device, every share cut into chunks, every
// tandem_malloc block pinned.
#pragma once

#include "testing/seam_override.hpp"

namespace tandem::test {

inline detail::seams::Values discrete(bool chunk_every_share = false,
                                      bool pin_every_block = false) {
  detail::seams::Values v;
  v.assume_discrete = true;
  if (chunk_every_share) v.overlap_from = 0;
  if (pin_every_block) v.pinned_from = 0;
  return v;
}

}  // namespace tandem::test
