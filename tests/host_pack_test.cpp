// The host packing code alone (src/gpu/host_pack), against naive element-by-element copies and
// updates, on awkward sizes and leading dimensions, on one thread and on several (blocks from
// database/defaults.json's host_pack parallel_from up are shared among threads).
#include "gpu/host_pack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "profile/defaults.hpp"

namespace tandem::detail::gpu {
namespace {

template <class T>
std::vector<T> random_values(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> v(count);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

struct Shape {
  int64_t rows, cols, pad;  // the caller's leading dimension is cols + pad
};
// Single rows and columns, odd sizes, one block of about 1.4 MiB and two of about 9 MiB in float
// (the threaded path: TheLargeShapesTakeTheThreadedPath).
const Shape kShapes[] = {{1, 1, 0},       {1, 37, 3},      {37, 1, 0},    {7, 13, 1},
                         {33, 65, 31},    {64, 64, 0},     {129, 257, 5}, {600, 601, 3},
                         {1500, 1501, 0}, {1601, 1403, 17}};

template <class T>
void packs_like_a_naive_copy(int threads) {
  for (const Shape& s : kShapes) {
    const int64_t ld = s.cols + s.pad;
    const auto src = random_values<T>(static_cast<size_t>(s.rows * ld),
                                      static_cast<uint64_t>(s.rows * 7 + s.cols));
    const std::string what = std::to_string(s.rows) + "x" + std::to_string(s.cols) + " ld " +
                             std::to_string(ld) + ", " + std::to_string(threads) + " threads";
    std::vector<T> tight(static_cast<size_t>(s.rows * s.cols), T(-7));
    pack(src.data(), s.rows, s.cols, ld, tight.data(), threads);
    std::vector<T> transposed(static_cast<size_t>(s.rows * s.cols), T(-7));
    pack_transposed(src.data(), s.rows, s.cols, ld, transposed.data(), threads);
    // Unpacking into a fresh array with the caller's leading dimension leaves the gaps alone.
    std::vector<T> back(static_cast<size_t>(s.rows * ld), T(-9));
    unpack(tight.data(), s.rows, s.cols, back.data(), ld, threads);
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t c = 0; c < ld; ++c) {
        const T x = src[static_cast<size_t>(r * ld + c)];
        if (c >= s.cols) {
          ASSERT_EQ(back[static_cast<size_t>(r * ld + c)], T(-9))
              << what << " gap at " << r << "," << c;
          continue;
        }
        ASSERT_EQ(tight[static_cast<size_t>(r * s.cols + c)], x)
            << what << " pack at " << r << "," << c;
        ASSERT_EQ(transposed[static_cast<size_t>(c * s.rows + r)], x)
            << what << " transpose at " << r << "," << c;
        ASSERT_EQ(back[static_cast<size_t>(r * ld + c)], x)
            << what << " unpack at " << r << "," << c;
      }
  }
}

// unpack_adding: C (the caller's leading dimension) = beta C + a tight product, for beta 1 (its
// own loop) and others, gaps left alone, against the same arithmetic element by element.
template <class T>
void adds_like_a_naive_update(int threads) {
  for (const Shape& s : kShapes)
    for (T beta : {T(1), T(-0.5), T(3)}) {
      const int64_t ld = s.cols + s.pad;
      const auto product = random_values<T>(static_cast<size_t>(s.rows * s.cols),
                                            static_cast<uint64_t>(s.rows * 5 + s.cols));
      auto c = random_values<T>(static_cast<size_t>(s.rows * ld), static_cast<uint64_t>(s.pad));
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t j = s.cols; j < ld; ++j) c[static_cast<size_t>(r * ld + j)] = T(-9);
      const auto old = c;
      unpack_adding(product.data(), s.rows, s.cols, beta, c.data(), ld, threads);
      const std::string what = std::to_string(s.rows) + "x" + std::to_string(s.cols) + " ld " +
                               std::to_string(ld) + ", beta " + std::to_string(beta) + ", " +
                               std::to_string(threads) + " threads";
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t j = 0; j < ld; ++j) {
          const size_t at = static_cast<size_t>(r * ld + j);
          const T want =
              j < s.cols ? beta * old[at] + product[static_cast<size_t>(r * s.cols + j)] : T(-9);
          ASSERT_EQ(c[at], want) << what << " at " << r << "," << j;
        }
    }
}

// The shapes above reach the threaded path, and the small ones the one-thread path, whatever the
// defaults file sets the threshold to (within what they span).
TEST(HostPack, TheLargeShapesTakeTheThreadedPath) {
  const size_t from = profile::host_pack_parallel_from();
  size_t least = SIZE_MAX, most = 0;
  for (const Shape& s : kShapes) {
    const size_t bytes = static_cast<size_t>(s.rows * s.cols) * sizeof(float);
    least = std::min(least, bytes);
    most = std::max(most, bytes);
  }
  EXPECT_GT(from, least);
  EXPECT_LE(from, most);
}

TEST(HostPack, FloatOneThread) { packs_like_a_naive_copy<float>(1); }
TEST(HostPack, FloatThreeThreads) { packs_like_a_naive_copy<float>(3); }
TEST(HostPack, DoubleOneThread) { packs_like_a_naive_copy<double>(1); }
TEST(HostPack, DoubleTwoThreads) { packs_like_a_naive_copy<double>(2); }
TEST(HostPack, AddingFloatOneThread) { adds_like_a_naive_update<float>(1); }
TEST(HostPack, AddingFloatThreeThreads) { adds_like_a_naive_update<float>(3); }
TEST(HostPack, AddingDoubleTwoThreads) { adds_like_a_naive_update<double>(2); }

}  // namespace
}  // namespace tandem::detail::gpu
