// Dynamic balance: the rows of C dealt out in chunks to whichever side (an OpenCL device or the
// CPU) asks next, from the front of what is left. Chunks are a fraction of a side's share of what
// is left, so they shrink as the call goes and a side that slows down takes less. A side whose
// every chunk is costly (a discrete GPU: each chunk is a share with its own queues, staging and
// pipeline start; B crosses the bus with the first only) starts with most of its static share,
// so a machine whose speeds match its profile pays it only a few more chunks.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace tandem::detail {

struct Chunk {
  int64_t row0 = 0, rows = 0;  // rows == 0: nothing is left
};

class Dealer {
 public:
  // `shares`: each side's rows under the static split (summing to m; a side with none takes no
  // part); `tiles`: each side's row tile (its chunks are multiples of it, but for the last rows);
  // `costly`: the sides whose chunks each cost a share's setup; `min_rows`: the smallest chunk
  // worth dealing to a costly side (the others' is a quarter of it).
  Dealer(int64_t m, std::vector<int64_t> shares, std::vector<int64_t> tiles,
         std::vector<bool> costly, int64_t min_rows);
  // The next chunk for side `i`, from the front of what is left. Thread-safe. `ahead`: side i
  // asks before its chunk in hand is done (to keep its queue full), and gets nothing rather than
  // the call's last rows while another side still takes chunks: those go to whoever is free.
  // `at_most`: the chunk's largest size (a batch's first chunks, before any side's rate is known).
  Chunk take(size_t i, bool ahead = false, int64_t at_most = INT64_MAX);
  // The same, for a side whose chunks can be short (a batch's CPU): no larger than the share of
  // what is left that it would finish together with the other live sides by their weights (the
  // rates, else the static shares); nothing where that share is not one row, and side i then
  // takes no more (retire). Its smallest chunk, a product per thread, would otherwise keep a side
  // far slower than the others busy long after they finish. Not rounded to the side's tile (a
  // batch's sides have none).
  Chunk take_in_time(size_t i);
  // Side `i`'s measured rate (rows, or a batch's problems, per second): once every side still
  // taking has one, chunks are sized by the rates instead of the static shares.
  void set_rate(size_t i, double rate);
  // Side `i` takes no more chunks (it failed): the others share what is left.
  void retire(size_t i);
  // Everything left, whoever takes it: what no side took because every side with a share failed.
  Chunk rest();
  int64_t left() const;

 private:
  int64_t size_for(size_t i) const;
  double weight(size_t j) const;  // side j's rate where every live side has one, else its share
  mutable std::mutex mutex_;
  int64_t m_, next_ = 0;
  std::vector<int64_t> shares_, tiles_;
  std::vector<bool> costly_, started_, live_;
  std::vector<double> rates_;
  int64_t min_rows_;
};

}  // namespace tandem::detail
