// tasks.hpp's arenas in a process bound to one core, as mpirun binds each rank: an arena of one
// thread, then larger ones (host packing asks for the machine's cores), must all run every index,
// and oneTBB must print no "TBB Warning: The number of workers is currently limited to 0". Each
// case runs in a child process of its own, bound before its first use of oneTBB, since oneTBB reads
// the affinity mask once, when it starts.
#include "tasks.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tandem::detail::tasks {
namespace {

namespace fs = std::filesystem;

// Runs this test binary again with only `test` selected, with TANDEM_TASKS_CHILD set; its exit
// status, and its standard error in *err.
int run_child(const std::string& test, std::string* err) {
  const fs::path log = fs::temp_directory_path() / ("tasks-" + test + ".err");
  const std::string command =
      "TANDEM_TASKS_CHILD=1 '" + fs::read_symlink("/proc/self/exe").string() +
      "' --gtest_filter='Tasks." + test + "' > /dev/null 2> '" + log.string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  *err = text.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

bool in_child() { return std::getenv("TANDEM_TASKS_CHILD") != nullptr; }

// Every index of a parallel loop in an arena of `threads`, once each.
void expect_every_index_once(int threads) {
  constexpr int64_t kCount = 64;
  std::vector<std::atomic<int>> seen(kCount);
  in_arena(threads, [&] { parallel_for(kCount, [&](int64_t i) { seen[i]++; }); });
  for (int64_t i = 0; i < kCount; ++i) EXPECT_EQ(seen[i].load(), 1) << "index " << i;
}

// The child: bound to the first core it may use, then the arenas in the order a hybrid call opens
// them (the CPU share's one thread, then host packing's all cores).
TEST(Tasks, OneCoreChild) {
  if (!in_child()) GTEST_SKIP() << "run by Tasks.OneCoreArenasRunWithoutWarning";
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  CPU_ZERO(&mask);
  CPU_SET(first, &mask);
  ASSERT_EQ(sched_setaffinity(0, sizeof mask, &mask), 0);
  for (int threads : {1, 2, 16, 1, 4}) expect_every_index_once(threads);
}

TEST(Tasks, OneCoreArenasRunWithoutWarning) {
  if (in_child()) GTEST_SKIP() << "the parent's test";
  std::string err;
  EXPECT_EQ(run_child("OneCoreChild", &err), 0) << err;
  EXPECT_EQ(err.find("TBB Warning"), std::string::npos) << err;
}

// Unbound, arenas of any size still run every index (the limit only lowers what is asked).
TEST(Tasks, ArenasOfAnySizeRunEveryIndex) {
  for (int threads : {1, 2, 3, 64}) expect_every_index_once(threads);
}

}  // namespace
}  // namespace tandem::detail::tasks
