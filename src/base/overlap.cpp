// Whether stored matrices share elements (src/base/overlap.hpp).
#include "base/overlap.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace tandem::detail::overlap {

bool share(const Block& x, const Block& y) {
  if (x.empty() || y.empty()) return false;
  const Block& lo = x.at <= y.at ? x : y;
  const Block& hi = x.at <= y.at ? y : x;
  if (hi.at >= lo.end()) return false;
  const int64_t bytes = hi.at - lo.at;
  if (lo.element != hi.element || lo.ld != hi.ld || bytes % lo.element != 0) return true;
  // hi's first element is row dr, column dc of lo's lattice; its rows run on from there, and a
  // row that passes the lattice's end (dc + cols > ld) wraps onto the next row's first columns.
  const int64_t e = bytes / lo.element, ld = lo.ld;
  const int64_t dr = e / ld, dc = e % ld;
  return dr < lo.rows && (dc < lo.cols || (dc + hi.cols > ld && dr + 1 < lo.rows));
}

std::optional<std::pair<int64_t, int64_t>> first_shared(const std::vector<Block>& blocks) {
  std::vector<int64_t> order;
  order.reserve(blocks.size());
  for (int64_t i = 0; i < static_cast<int64_t>(blocks.size()); ++i)
    if (!blocks[i].empty()) order.push_back(i);
  const auto key = [&](int64_t i) {
    const Block& b = blocks[i];
    return std::tuple(b.at, !b.output, b.rows, b.cols, b.ld, b.element);
  };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key(a) < key(b); });
  // An input identical to the one before it (one A or B shared by many problems) adds nothing.
  order.erase(std::unique(order.begin(), order.end(),
                          [&](int64_t a, int64_t b) {
                            return !blocks[a].output && !blocks[b].output && key(a) == key(b);
                          }),
              order.end());
  // The blocks met so far whose ranges reach past the current one's start, outputs and inputs
  // apart: inputs are compared with outputs only, never with each other.
  std::vector<int64_t> outputs, inputs;
  const auto close = [&](std::vector<int64_t>& open, const char* at) {
    open.erase(
        std::remove_if(open.begin(), open.end(), [&](int64_t j) { return blocks[j].end() <= at; }),
        open.end());
  };
  for (const int64_t i : order) {
    const Block& b = blocks[i];
    close(outputs, b.at);
    for (const int64_t j : outputs)
      if (share(blocks[j], b)) return std::pair(j, i);
    if (b.output) {
      close(inputs, b.at);
      for (const int64_t j : inputs)
        if (share(blocks[j], b)) return std::pair(j, i);
    }
    (b.output ? outputs : inputs).push_back(i);
  }
  return std::nullopt;
}

}  // namespace tandem::detail::overlap
