// The main() of every GoogleTest executable here: each test process gets its own empty profile
// directory, so no profile from the user's cache (~/.cache/tandem, which `bash scripts/demo.sh`
// fills) or from another test reaches it. Tests that need a profile directory of their own still
// set TANDEM_PROFILE_DIR themselves.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Always replaced, never inherited: a TANDEM_PROFILE_DIR exported in the caller's shell may
  // hold that user's tuned profiles.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tandem-test-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    std::perror("tandem tests: cannot make an empty profile directory");
    return 1;
  }
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
  const int status = RUN_ALL_TESTS();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return status;
}
