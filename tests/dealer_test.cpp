// The dealer of dynamic balance: every row dealt once and in order, chunks on each side's tile,
// first chunks near the static shares, and, in a simulation of sides whose speeds drift, a
// finish close to the ideal where the static split is far from it.
#include "plan/dealer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace tandem::test {
namespace {

using detail::Chunk;
using detail::Dealer;

TEST(Dealer, EveryRowOnceInOrderOnTheTiles) {
  for (int64_t m : {1, 7, 64, 100, 1000, 4097}) {
    Dealer d(m, {m / 2, m / 4, m - m / 2 - m / 4}, {16, 4, 1}, {true, false, false}, (m + 63) / 64);
    int64_t next = 0;
    for (int turn = 0;; ++turn) {
      const size_t side = static_cast<size_t>(turn % 3);
      const Chunk c = d.take(side);
      if (c.rows == 0) {
        if (d.left() == 0) break;
        continue;  // a side with no share
      }
      EXPECT_EQ(c.row0, next) << m;
      const int64_t tile = side == 0 ? 16 : side == 1 ? 4 : 1;
      if (c.row0 + c.rows < m) {
        EXPECT_EQ(c.rows % tile, 0) << m << " side " << side;
      }
      next += c.rows;
      ASSERT_LT(turn, 10000);
    }
    EXPECT_EQ(next, m);
  }
}

TEST(Dealer, ChunksAreHalfAShareOfWhatIsLeftAndACostlySideStartsWithMore) {
  Dealer d(1024, {768, 0, 256}, {1, 1, 1}, {true, false, false}, 16);
  EXPECT_EQ(d.take(0).rows, 576) << "three quarters of a costly side's share";
  EXPECT_EQ(d.take(1).rows, 0) << "a side without a share takes no part";
  EXPECT_EQ(d.take(2).rows, 56) << "half of a quarter of the 448 rows left";
  EXPECT_EQ(d.left(), 392);
  EXPECT_EQ(d.take(0).rows, 147) << "half of three quarters of what is left";
}

TEST(Dealer, ARetiredSideTakesNothingAndTheOthersTakeTheRest) {
  Dealer d(1000, {500, 500}, {1, 1}, {false, false}, 10);
  const int64_t first = d.take(0).rows + d.take(1).rows;
  d.retire(1);
  EXPECT_EQ(d.take(1).rows, 0);
  int64_t rows = 0;
  for (Chunk c = d.take(0); c.rows > 0; c = d.take(0)) rows += c.rows;
  EXPECT_EQ(rows, 1000 - first);
}

// A batch's CPU, whose smallest chunk is a product a thread, takes in time only what it would
// finish with the others by the rates: a share of what is left where that is a product or more,
// nothing where it is not, and then no more; the others take the rest.
TEST(Dealer, ASlowSideTakesInTimeOnlyWhatItWouldFinishWithTheOthers) {
  // 100 problems, the device costly, the CPU's smallest chunk 14 (a quarter of 56).
  Dealer d(100, {80, 20}, {1, 1}, {true, false}, 56);
  EXPECT_EQ(d.take(0, false, 6).rows, 6);
  EXPECT_EQ(d.take(1, false, 6).rows, 6) << "first chunks as before";
  d.set_rate(0, 1000);
  d.set_rate(1, 100);
  EXPECT_EQ(d.take(1).rows, 14) << "take: the smallest chunk, whatever the rates";
  const int64_t left = d.left();  // 74
  const Chunk in_time = d.take_in_time(1);
  EXPECT_EQ(in_time.rows, left * 100 / 1100) << "the CPU's share of what is left, by the rates";
  EXPECT_LT(in_time.rows, 14);
  EXPECT_GT(d.take(0, false, d.left() - 3).rows, 0) << "the device leaves three";
  ASSERT_EQ(d.left(), 3);
  EXPECT_EQ(d.take_in_time(1).rows, 0) << "less than one product in time: nothing";
  EXPECT_EQ(d.take(1).rows, 0) << "and no more";
  int64_t rest = 0;
  for (Chunk c = d.take(0); c.rows > 0; c = d.take(0)) rest += c.rows;
  EXPECT_EQ(d.left(), 0);
  EXPECT_GT(rest, 0) << "the device takes the rest";
  // Alone, a side takes in time what take would give it.
  Dealer alone(10, {10}, {1}, {false}, 4);
  EXPECT_EQ(alone.take_in_time(0).rows, 5);
}

// A side asking ahead of time never takes the call's last rows while another side still takes
// chunks: those wait for whoever is free. Alone, or once the others have retired, it takes them.
TEST(Dealer, AskingAheadLeavesTheLastRowsToWhoeverIsFree) {
  Dealer d(256, {192, 64}, {64, 1}, {true, false}, 4);
  EXPECT_EQ(d.take(0).rows, 192) << "three quarters of 192 on the tile of 64";
  EXPECT_EQ(d.take(0, /*ahead=*/true).rows, 0) << "the 64 left are the call's last";
  EXPECT_EQ(d.left(), 64);
  EXPECT_EQ(d.take(0).rows, 64) << "asked when free, the last rows are its";
  Dealer e(256, {192, 64}, {64, 1}, {true, false}, 4);
  e.take(0);
  e.retire(1);
  EXPECT_EQ(e.take(0, /*ahead=*/true).rows, 64) << "no one else takes chunks";
  Dealer f(1024, {768, 256}, {1, 1}, {true, false}, 16);
  f.take(0);
  EXPECT_EQ(f.take(0, /*ahead=*/true).rows, 168) << "not the last rows: as any chunk";
}

// Sides computing rows at their own rates, each taking its next chunk when it finishes one, and
// paying `overhead` seconds per chunk. Returns when the last one finishes.
double simulate(Dealer& d, std::vector<double> rates, double overhead) {
  std::vector<double> free_at(rates.size(), 0.0);
  double end = 0;
  for (;;) {
    size_t next = 0;
    for (size_t i = 1; i < rates.size(); ++i)
      if (free_at[i] < free_at[next]) next = i;
    if (free_at[next] == std::numeric_limits<double>::infinity()) break;
    const Chunk c = d.take(next);
    if (c.rows == 0) {
      free_at[next] = std::numeric_limits<double>::infinity();
      continue;
    }
    free_at[next] += overhead + static_cast<double>(c.rows) / rates[next];
    end = std::max(end, free_at[next]);
  }
  return end;
}

// A profile that says the GPU is 3x the CPU, on a machine where the CPU is busy with another
// program (half its speed) or the GPU is throttled (75%): the static split finishes late by the
// drift, dynamic balance within a few percent of the ideal (all rows at the sides' true rates).
TEST(Dealer, DriftingSpeedsFinishNearTheIdeal) {
  const int64_t m = 16384;
  const std::vector<int64_t> shares{12288, 4096};  // the profile: GPU 3, CPU 1
  for (const auto& rates : std::vector<std::vector<double>>{{3, 0.5}, {2.25, 1}, {3, 1}}) {
    const double ideal = static_cast<double>(m) / (rates[0] + rates[1]);
    const double overhead = ideal / 1000;  // each chunk costs 0.1% of the call
    const double fixed = std::max(static_cast<double>(shares[0]) / rates[0],
                                  static_cast<double>(shares[1]) / rates[1]) +
                         overhead;
    for (bool discrete : {false, true}) {
      Dealer d(m, shares, {128, 1}, {discrete, false}, m / 64);
      const double dynamic = simulate(d, rates, overhead);
      EXPECT_LT(dynamic, 1.05 * ideal) << rates[0] << "/" << rates[1] << " " << discrete;
      if (rates[0] / rates[1] != 3.0) {
        EXPECT_LT(dynamic, fixed) << rates[0] << "/" << rates[1] << " " << discrete;
      }
    }
  }
}

}  // namespace
}  // namespace tandem::test
