// The chunking rule of a discrete share's pipeline (chunks.hpp).
#include "model/chunks.hpp"

#include <algorithm>

namespace tandem::detail::cost {

int64_t chunk_rows(int64_t m, int64_t n, size_t bytes, int64_t mwg, int64_t nwg, int compute_units,
                   int chunk_fill, size_t overlap_from) {
  constexpr int64_t kMaxChunks = 8;
  if (one_chunk(static_cast<double>(bytes), overlap_from) || mwg < 1 || nwg < 1) return m;
  const int64_t groups_n = (n + nwg - 1) / nwg;
  const int64_t fill = int64_t{std::max(1, compute_units)} * std::max(1, chunk_fill);
  // A chunk is a whole number of "fills", each the most rows of tiles whose work-groups do not
  // exceed `fill`: a chunk a little over a whole number of the device's waves runs a nearly
  // empty wave more. Rounding up to whole tile rows did that wherever groups_n did not divide the
  // fill: on the H100 (132 compute units, fill 2, 64 x 64 tiles) sgemm 4160^3 ran chunks of 585
  // work-groups where 4096^3 ran 512, and its kernels took 7.5 ms against 4.1.
  const int64_t unit = std::max<int64_t>(1, fill / groups_n) * mwg;
  const int64_t wanted = (m + kMaxChunks - 1) / kMaxChunks;
  const int64_t rows = std::max<int64_t>(1, (wanted + unit - 1) / unit) * unit;
  return std::min(rows, m);
}

}  // namespace tandem::detail::cost
