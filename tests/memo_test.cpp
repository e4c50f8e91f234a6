// detail::Memo (src/base/memo.hpp): the per-call path's remembered results.
#include "base/memo.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using tandem::detail::Memo;

// A key seen through a view whose hash is chosen by the test, so that collisions can be forced.
struct View {
  int key;
  uint64_t forced_hash;
  uint64_t hash() const { return forced_hash; }
  bool matches(int k) const { return k == key; }
  int own() const { return key; }
};

TEST(Memo, MakesEachKeyOnce) {
  Memo<int, std::string> memo;
  int made = 0;
  const auto make = [&](int k) {
    return [&made, k] {
      ++made;
      return std::to_string(k);
    };
  };
  EXPECT_EQ(memo.get(View{1, 1}, make(1)), "1");
  EXPECT_EQ(memo.get(View{1, 1}, make(1)), "1");
  EXPECT_EQ(memo.get(View{2, 2}, make(2)), "2");
  EXPECT_EQ(made, 2);
}

TEST(Memo, KeysThatShareAHashStayApart) {
  Memo<int, std::string> memo;
  EXPECT_EQ(memo.get(View{1, 7}, [] { return std::string("one"); }), "one");
  EXPECT_EQ(memo.get(View{2, 7}, [] { return std::string("two"); }), "two");
  EXPECT_EQ(memo.get(View{1, 7}, [] { return std::string("wrong"); }), "one");
  EXPECT_EQ(memo.get(View{2, 7}, [] { return std::string("wrong"); }), "two");
}

TEST(Memo, AFailureIsNotRemembered) {
  Memo<int, int> memo;
  EXPECT_THROW(memo.get(View{1, 1}, []() -> int { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(memo.get(View{1, 1}, [] { return 5; }), 5);
}

TEST(Memo, StartsOverRatherThanGrow) {
  Memo<int, int> memo;
  int made = 0;
  for (int k = 0; k < 1000; ++k) memo.get(View{k, uint64_t(k)}, [&] { return ++made; });
  EXPECT_EQ(made, 1000);
  // Key 0 was dropped when the table started over; the last key is still there.
  memo.get(View{0, 0}, [&] { return ++made; });
  EXPECT_EQ(made, 1001);
  memo.get(View{999, 999}, [&] { return ++made; });
  EXPECT_EQ(made, 1001);
}

TEST(Memo, ThreadsGetTheRightValues) {
  Memo<int, int> memo;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        const int k = i % 300;  // past the limit, so the table also starts over under contention
        if (memo.get(View{k, uint64_t(k % 17)}, [k] { return k * 3; }) != k * 3) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Memo, MapHashesDependOnNamesAndValues) {
  using tandem::detail::hash_map;
  const std::map<std::string, int> a{{"MWG", 64}, {"NWG", 32}};
  EXPECT_EQ(hash_map(a), hash_map(std::map<std::string, int>{{"MWG", 64}, {"NWG", 32}}));
  EXPECT_NE(hash_map(a), hash_map(std::map<std::string, int>{{"MWG", 64}, {"NWG", 64}}));
  EXPECT_NE(hash_map(a), hash_map(std::map<std::string, int>{{"MWG", 64}, {"NWX", 32}}));
}

}  // namespace
