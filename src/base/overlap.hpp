// Whether stored matrices share elements: the rule a batch's aliasing check applies
// (src/api/batch.cpp). A batch's outputs must share no element with each other or with any
// operand of the batch; its inputs may share anything.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "base/problem.hpp"

namespace tandem::detail::overlap {

// A stored row-major block: `rows` x `cols` elements of `element` bytes from `at`, rows `ld`
// elements apart (ld >= cols), and whether the batch writes it.
struct Block {
  const char* at = nullptr;
  int64_t rows = 0, cols = 0, ld = 0, element = 0;
  bool output = false;
  bool empty() const { return rows <= 0 || cols <= 0; }
  const char* end() const { return at + span(rows, cols, ld) * element; }
};

// Whether x and y share an element. Exact for blocks of one element size and one ld whose
// starts lie a whole number of elements apart (tiles of one matrix, the blocks of a strided
// batch); for any other pair, whether their byte ranges meet.
bool share(const Block& x, const Block& y);

// The first pair of `blocks` (their indices, in the order the sweep meets them) that share an
// element where at least one is an output, or none. Sorts by address (identical inputs counted
// once) and compares each block with the outputs, and each output with the inputs, whose ranges
// it meets: O(B log B) plus those pairs (many only where outputs' ranges interleave, as tiles of
// one matrix do).
std::optional<std::pair<int64_t, int64_t>> first_shared(const std::vector<Block>& blocks);

}  // namespace tandem::detail::overlap
