// What hermetic_main.cpp promises, seen from inside a test process: a profile directory of its
// own, empty, and the only one the library reads, with the temporary directory beside it.
// tests/poisoned_cache.sh runs these with a poisoned profile in HOME's and XDG_CACHE_HOME's cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "profile/store.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;

fs::path env_path(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? fs::path() : fs::path(v);
}

TEST(Hermetic, TheProfileDirectoryIsThisProcesssOwnAndEmpty) {
  const fs::path dir = env_path("TANDEM_PROFILE_DIR");
  ASSERT_FALSE(dir.empty()) << "TANDEM_PROFILE_DIR is not set: the library falls back to "
                            << detail::profile::directory();
  EXPECT_EQ(detail::profile::directory(), dir);
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  EXPECT_TRUE(fs::is_empty(dir)) << dir;
  // hermetic_main's layout: TMPDIR/tandem-test-XXXXXX/{profiles,tmp}.
  const fs::path root = dir.parent_path();
  EXPECT_EQ(dir.filename(), "profiles") << dir;
  EXPECT_EQ(root.filename().string().rfind("tandem-test-", 0), 0u) << root;
  EXPECT_EQ(env_path("TMPDIR"), root / "tmp");
  EXPECT_EQ(fs::temp_directory_path(), root / "tmp");
}

// A call on the GPU path looks its device's profile up: none of the user's may apply, only the
// built-in database's (PoCL's platform fallback here).
TEST(Hermetic, ACallAppliesNoLocalProfile) {
  const int64_t n = 96;
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  Options o;
  o.strategy = Strategy::Hybrid;
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n, o, &r);
  EXPECT_FALSE(r.fell_back) << r.fallback_reason;
  EXPECT_TRUE(r.profile.empty() || r.profile.rfind("built-in:", 0) == 0) << r.profile;
  for (float x : c) ASSERT_EQ(x, float(n));
}

}  // namespace
}  // namespace tandem::test
