// The main() of every GoogleTest executable in tests/: each test process runs with its own fresh,
// empty profile directory and its own temporary directory, both removed when it ends.
//
// Why: a profile in the user's cache (~/.cache/tandem, which `bash scripts/demo.sh` fills through
// `tandem compare`) changes the kernel, the split and the warnings of the calls the tests make, so
// tests that passed on a fresh machine failed after the demo. ctest runs each test case as its own
// process (gtest_discover_tests), so under ctest every test case starts from an empty directory;
// run by hand, the cases of one executable share one, empty at the start and never the user's.
//
// TANDEM_PROFILE_DIR is always replaced, even when inherited: a process cannot tell a value ctest
// set on purpose from one exported in the developer's shell, and the second is the very leak this
// closes. A test that wants a directory of its own choosing sets it once running (as
// cotuner_test's ProfileDir fixture does), after this main, so its choice wins.
//
// XDG_CACHE_HOME and HOME are left alone: while TANDEM_PROFILE_DIR is set and not empty the library
// never reads them (profile::directory()), and PoCL keeps its compiled kernels under them, so a
// fake one would make every test process compile its kernels again (executor_test takes 0.5 s
// with that cache and 5 s without). tests/poisoned_cache.sh plants a profile under both and shows
// that no test process reads it.
#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp, setenv (POSIX)

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

namespace fs = std::filesystem;

// Makes $TMPDIR/tandem-test-XXXXXX with profiles/ (TANDEM_PROFILE_DIR) and tmp/ (TMPDIR, so the
// tests' own temporary files go with it) inside, before anything in the process reads either;
// removes it all when destroyed. A process that crashes leaves its directory behind.
class HermeticDirectory {
 public:
  HermeticDirectory() {
    std::string root = (fs::temp_directory_path() / "tandem-test-XXXXXX").string();
    if (::mkdtemp(root.data()) == nullptr) {
      // Never fall back to the user's cache: that is what a test must not see.
      std::perror(("hermetic_main: cannot create " + root).c_str());
      std::exit(1);
    }
    root_ = root;
    // mkdtemp makes it 0700; a test that drops privileges in a child (power_test's
    // PermissionDeniedIsUnavailableNotACrash, as nobody) must still reach its files under TMPDIR.
    fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    const fs::path profiles = root_ / "profiles", tmp = root_ / "tmp";
    fs::create_directory(profiles);
    fs::create_directory(tmp);
    if (const char* inherited = std::getenv("TANDEM_PROFILE_DIR");
        inherited != nullptr && *inherited != '\0')
      std::fprintf(stderr,
                   "hermetic_main: not using the inherited TANDEM_PROFILE_DIR=%s; this test "
                   "process has its own, %s\n",
                   inherited, profiles.c_str());
    ::setenv("TANDEM_PROFILE_DIR", profiles.c_str(), 1);
    ::setenv("TMPDIR", tmp.c_str(), 1);
  }
  ~HermeticDirectory() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  HermeticDirectory(const HermeticDirectory&) = delete;
  HermeticDirectory& operator=(const HermeticDirectory&) = delete;

 private:
  fs::path root_;
};

}  // namespace

int main(int argc, char** argv) {
  const HermeticDirectory directory;  // first: the library reads the environment lazily, later
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
