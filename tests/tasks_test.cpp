// tasks.hpp's arenas in a process bound to one core, as mpirun binds each rank: an arena of one
// thread, then larger ones (host packing asks for the machine's cores), must all run every index,
// and oneTBB must print no "TBB Warning: The number of workers is currently limited to 0". The
// bound process is a death-test child started afresh ("threadsafe" style re-runs this executable),
// so it binds itself before its first use of oneTBB, which reads the affinity mask once, at start.
#include "cpu/tasks.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <vector>

namespace tandem::detail::tasks {
namespace {

// Every index of a parallel loop in an arena of `threads`, once each.
bool every_index_once(int threads) {
  constexpr int64_t kCount = 64;
  std::vector<std::atomic<int>> seen(kCount);
  in_arena(threads, [&] { parallel_for(kCount, [&](int64_t i) { seen[i]++; }); });
  for (const auto& s : seen)
    if (s.load() != 1) return false;
  return true;
}

// Binds this process to the first core it may use, then opens arenas in the order a hybrid call
// does (the CPU share's one thread, then host packing's all cores); exits 0 if each ran every
// index once.
void bound_to_one_core() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0) std::exit(2);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  CPU_ZERO(&mask);
  CPU_SET(first, &mask);
  if (sched_setaffinity(0, sizeof mask, &mask) != 0) std::exit(2);
  for (int threads : {1, 2, 16, 1, 4})
    if (!every_index_once(threads)) std::exit(1);
  std::exit(0);
}

TEST(Tasks, OneCoreArenasRunWithoutWarning) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(bound_to_one_core(), testing::ExitedWithCode(0),
              testing::Not(testing::HasSubstr("TBB Warning")));
}

// Unbound, arenas of any size still run every index (the limit only lowers what is asked).
TEST(Tasks, ArenasOfAnySizeRunEveryIndex) {
  for (int threads : {1, 2, 3, 64}) EXPECT_TRUE(every_index_once(threads)) << threads;
}

}  // namespace
}  // namespace tandem::detail::tasks
