// How a discrete device's share is cut into chunks of C's rows: one rule, which the share's
// pipeline runs (gpu/) and the cost model predicts with (cost_model.cpp). Pure arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tandem::detail::cost {

// Rows of C per chunk of a discrete device's share of m x n (its copies `bytes` in all): a whole
// number of fills, a fill being the most rows of tiles whose work-groups give every compute unit
// at most `chunk_fill` of them (a trade between the kernel's occupancy and the overlap of copies
// with it), at most 8 chunks, and one chunk when the copies are below `overlap_from` bytes
// (one_chunk).
int64_t chunk_rows(int64_t m, int64_t n, size_t bytes, int64_t mwg, int64_t nwg, int compute_units,
                   int chunk_fill, size_t overlap_from);
// Whether a discrete share whose copies take `bytes` runs as one chunk, its packing, copies,
// kernel and unpacking one after another: below `overlap_from`, overlapping them does not pay.
inline bool one_chunk(double bytes, size_t overlap_from) {
  return bytes < static_cast<double>(overlap_from);
}

}  // namespace tandem::detail::cost
