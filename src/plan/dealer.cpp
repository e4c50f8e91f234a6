// Dealing rows: a chunk is kLater of a side's share of what is left (by the static shares of the
// sides still taking), so the chunks shrink geometrically and the last few go to whichever sides
// are free; a costly side's first chunk is kFirst of its static share.
#include "plan/dealer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace tandem::detail {
namespace {

// Half a side's share of what is left: a side may run at half the speed its profile says (a CPU
// that another program is using) and still finish its first chunk before the others finish
// theirs. A costly side's first chunk leaves only a quarter of its share to be dealt later: room
// to run 25% slower than its profile says (RaijinCL measured both sides of an Ivy Bridge APU
// slowing to about 75% when both were busy), and it keeps a discrete GPU to about
// log2(m / (4 min_rows)) + 1 chunks.
constexpr double kFirst = 0.75;
constexpr double kLater = 0.5;
// A side whose chunks cost no copy (the CPU, a GPU that shares the host's memory) takes chunks
// down to a quarter of the smallest costly one: the call's last chunk, which no one can share,
// is then short even on a side much slower than the others.
constexpr int64_t kCheapSmaller = 4;

int64_t round_up(int64_t rows, int64_t tile) { return (rows + tile - 1) / tile * tile; }

}  // namespace

Dealer::Dealer(int64_t m, std::vector<int64_t> shares, std::vector<int64_t> tiles,
               std::vector<bool> costly, int64_t min_rows)
    : m_(m),
      shares_(std::move(shares)),
      tiles_(std::move(tiles)),
      costly_(std::move(costly)),
      started_(shares_.size(), false),
      live_(shares_.size(), true),
      rates_(shares_.size(), 0.0),
      min_rows_(std::max<int64_t>(1, min_rows)) {
  tiles_.resize(shares_.size(), 1);
  costly_.resize(shares_.size(), false);
  for (auto& t : tiles_) t = std::max<int64_t>(1, t);
  for (size_t i = 0; i < shares_.size(); ++i) live_[i] = shares_[i] > 0;
}

double Dealer::weight(size_t j) const {
  bool rated = true;
  for (size_t k = 0; k < shares_.size(); ++k) rated = rated && (!live_[k] || rates_[k] > 0);
  return rated ? rates_[j] : static_cast<double>(shares_[j]);
}

int64_t Dealer::size_for(size_t i) const {
  const int64_t left = m_ - next_;
  double rows = 0;
  if (!started_[i] && costly_[i]) {
    rows = kFirst * static_cast<double>(shares_[i]);
  } else {
    double live = 0;
    for (size_t j = 0; j < shares_.size(); ++j)
      if (live_[j]) live += weight(j);
    rows = live > 0 ? kLater * static_cast<double>(left) * weight(i) / live
                    : static_cast<double>(left);
  }
  const int64_t tile = tiles_[i];
  const int64_t smallest = costly_[i] ? min_rows_ : std::max<int64_t>(1, min_rows_ / kCheapSmaller);
  int64_t size = round_up(std::max<int64_t>(smallest, std::llround(rows)), tile);
  // A remainder smaller than the smallest chunk goes with this one.
  if (left - size < smallest) size = left;
  return std::min(size, left);
}

Chunk Dealer::take(size_t i, bool ahead, int64_t at_most) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i >= shares_.size() || !live_[i] || next_ >= m_) return {};
  Chunk c{next_, std::min(size_for(i), std::max<int64_t>(at_most, 1))};
  if (ahead && next_ + c.rows == m_)
    for (size_t j = 0; j < shares_.size(); ++j)
      if (j != i && live_[j]) return {};
  started_[i] = true;
  next_ += c.rows;
  return c;
}

Chunk Dealer::take_in_time(size_t i) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i >= shares_.size() || !live_[i] || next_ >= m_) return {};
  const int64_t left = m_ - next_;
  double others = 0;
  for (size_t j = 0; j < shares_.size(); ++j)
    if (j != i && live_[j]) others += weight(j);
  int64_t rows = size_for(i);
  if (others > 0) {
    const double mine = weight(i);
    const auto in_time = static_cast<int64_t>(static_cast<double>(left) * mine / (mine + others));
    rows = std::min(rows, in_time);
  }
  if (rows <= 0) {
    live_[i] = false;
    return {};
  }
  started_[i] = true;
  const Chunk c{next_, rows};
  next_ += rows;
  return c;
}

void Dealer::set_rate(size_t i, double rate) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i < rates_.size() && rate > 0) rates_[i] = rate;
}

void Dealer::retire(size_t i) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (i < live_.size()) live_[i] = false;
}

Chunk Dealer::rest() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Chunk c{next_, m_ - next_};
  next_ = m_;
  return c;
}

int64_t Dealer::left() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return m_ - next_;
}

}  // namespace tandem::detail
