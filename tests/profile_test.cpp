// Device profiles as hand-edited files (issue 16): numbers that are not the integers they must be,
// files that are not profiles (a FIFO, hundreds of MB) and a profile directory that cannot be
// read. tests/faults_test.sh shows the same end to end.
#include "profile.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// A small valid profile's text, with `bucket` as its one bucket's fields after "size".
std::string profile_text(const std::string& bucket, const std::string& kernel = "{\"MWG\": 64}") {
  return R"({"format": 1, "tandem_version": "0.1.0", "identity": {"platform": "p", "device": "d",
    "driver": "1", "compute_units": 2, "cpu_model": "c", "blas": "b", "blas_version": "1",
    "blas_core": "z", "threads": 2},
    "precisions": {"s": {"gpu_kernel": )" +
         kernel + R"(, "gpu_size": 512, "gpu_gflops": 1.5,
      "buckets": [{"size": 512, )" +
         bucket + R"(, "kernel": {}, "cpu_gflops": 1, "gpu_gflops": 1, "best_gflops": 1}]}}})";
}

const char* kBucket = R"("parts": 8, "gpu_parts": 4, "cpu_threads": 1)";

// The message from_json gives for `text`, or "" if it parses.
std::string refusal(const std::string& text) {
  try {
    prof::from_json(text);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(Profile, IntegersMustBeIntegersInRange) {
  EXPECT_EQ(refusal(profile_text(kBucket)), "");
  EXPECT_EQ(prof::from_json(profile_text(kBucket)).precisions.at('s').gpu_kernel.at("MWG"), 64);
  // Truncated to 64 before, silently.
  EXPECT_NE(refusal(profile_text(kBucket, "{\"MWG\": 64.7}"))
                .find("kernel parameter MWG = 64.7 is not an integer"),
            std::string::npos);
  // Overflowed the int conversion before.
  EXPECT_NE(refusal(profile_text(kBucket, "{\"MWG\": 1e10}")).find("kernel parameter MWG"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "{\"NWG\": 10000000000}"))
                .find("kernel parameter NWG = 10000000000 is out of range"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "{\"NWG\": -3000000000}")).find("out of range"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(kBucket, "[64]")).find("a kernel must be an object"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(R"("parts": 8.5, "gpu_parts": 4, "cpu_threads": 1)"))
                .find("parts = 8.5 is not an integer"),
            std::string::npos);
  EXPECT_NE(refusal(profile_text(R"("parts": 8, "gpu_parts": 4, "cpu_threads": 4294967297)"))
                .find("cpu_threads = 4294967297 is out of range"),
            std::string::npos);
}

// The directory hermetic_main.cpp gave this process.
fs::path profile_dir() { return std::getenv("TANDEM_PROFILE_DIR"); }

TEST(Profile, OnlyRegularFilesOfAProfilesSizeAreRead) {
  const fs::path fifo = profile_dir() / "fifo.json", big = profile_dir() / "big.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    prof::load(fifo);  // would wait for a writer forever if it opened the FIFO
    ADD_FAILURE() << "a FIFO loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  { std::ofstream(big) << profile_text(kBucket); }
  fs::resize_file(big, 5 << 20);  // sparse: the valid text, then zeros
  try {
    prof::load(big);
    ADD_FAILURE() << "a 5 MiB file loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("5242880 bytes: a profile is at most 4194304"),
              std::string::npos)
        << e.what();
  }
  // Each is skipped, with one warning, by the lookup every call makes.
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(prof::Identity{});
  prof::forget();
  prof::active(prof::Identity{});
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("fifo.json is not a regular file"), std::string::npos) << err;
  EXPECT_NE(err.find("big.json is 5242880 bytes"), std::string::npos) << err;
  EXPECT_EQ(err.find("fifo.json", err.find("fifo.json") + 1), std::string::npos)
      << "warned twice: " << err;
}

TEST(Profile, AnUnreadableDirectoryIsReportedOnce) {
  const fs::path dir = profile_dir(), file = dir / "not-a-directory";
  { std::ofstream(file) << "x"; }
  setenv("TANDEM_PROFILE_DIR", file.c_str(), 1);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    prof::forget();
    prof::active(prof::Identity{});
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
  const std::string said = "cannot read the profile directory " + file.string() + " (not a dir";
  EXPECT_NE(err.find(said), std::string::npos) << err;
  EXPECT_EQ(err.find(said, err.find(said) + 1), std::string::npos) << "warned twice: " << err;
  // A directory that does not exist yet is no fault: nothing was tuned.
  setenv("TANDEM_PROFILE_DIR", (dir / "absent").c_str(), 1);
  ::testing::internal::CaptureStderr();
  prof::forget();
  prof::active(prof::Identity{});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
}

}  // namespace
}  // namespace tandem::test
