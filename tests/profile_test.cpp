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
#include <tuple>

#include "gpu/architecture.hpp"

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

namespace tandem::test {
namespace {

// Architectures: the text form, the distance (same family only; a major version apart is further
// than any minor one), and the database's nearest entry.
TEST(Architecture, TextAndDistance) {
  namespace gpu = detail::gpu;
  const auto a = gpu::parse_architecture("nvidia-sm:9.0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->family, "nvidia-sm");
  EXPECT_EQ(a->major, 9);
  EXPECT_EQ(a->text(), "nvidia-sm:9.0");
  for (const char* bad : {"", "sm90", ":9.0", "nvidia-sm:9", "nvidia-sm:9.0x", "nvidia-sm:-1.0"})
    EXPECT_FALSE(gpu::parse_architecture(bad)) << bad;
  EXPECT_EQ(gpu::architecture_distance("nvidia-sm:9.0", "nvidia-sm:9.0"), 0);
  EXPECT_LT(*gpu::architecture_distance("nvidia-sm:8.9", "nvidia-sm:8.0"),
            *gpu::architecture_distance("nvidia-sm:8.9", "nvidia-sm:9.0"));
  EXPECT_FALSE(gpu::architecture_distance("nvidia-sm:9.0", "amd-gfx:9.0"));
  EXPECT_FALSE(gpu::architecture_distance("", "nvidia-sm:9.0"));
}

prof::Profile entry(const std::string& device, const std::string& architecture,
                    const std::string& match = "device") {
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.match = match;
  p.identity.platform = "NVIDIA CUDA";
  p.identity.device = device;
  p.identity.architecture = architecture;
  p.origin = "built-in:" + device;
  return p;
}

TEST(Architecture, AnUnlistedDeviceTakesItsNearestRelative) {
  const std::vector<prof::Profile> db{
      entry("H100", "nvidia-sm:9.0"), entry("A100", "nvidia-sm:8.0"),
      entry("fallback", "", "platform"), entry("an AMD card", "amd-gfx:9.0")};
  prof::Identity id;
  id.platform = "NVIDIA CUDA";
  std::string how;
  for (const auto& [arch, want] : {std::pair<const char*, const char*>{"nvidia-sm:9.0", "H100"},
                                   {"nvidia-sm:8.9", "A100"},
                                   {"nvidia-sm:8.6", "A100"},
                                   {"nvidia-sm:10.0", "H100"}}) {
    id.architecture = arch;
    const prof::Profile* p = prof::nearest_architecture(id, db, &how);
    ASSERT_NE(p, nullptr) << arch;
    EXPECT_EQ(p->identity.device, want) << arch;
    EXPECT_NE(how.find(arch), std::string::npos) << how;
  }
  id.architecture = "";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "no architecture, no relative";
  id.architecture = "intel-ip:12.60";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "another family";
  id.platform = "Other";
  id.architecture = "nvidia-sm:9.0";
  EXPECT_EQ(prof::nearest_architecture(id, db, &how), nullptr) << "another platform";
}

// One device tuned on two kinds of host (one H200 beside 16 cores, two beside 32): the entry of
// the likest host applies, the CPU and thread count first, then the CPU; else the first listed.
TEST(BuiltinEntry, ADevicesEntryFromTheLikestHost) {
  const auto tuned_on = [](const std::string& origin, const std::string& cpu, int threads) {
    prof::Profile p = entry("H200", "nvidia-sm:9.0");
    p.identity.cpu_model = cpu;
    p.identity.threads = threads;
    p.origin = origin;
    return p;
  };
  const std::vector<prof::Profile> db{entry("fallback", "", "platform"),
                                      tuned_on("one", "Xeon", 16), tuned_on("two", "Xeon", 32),
                                      tuned_on("epyc", "EPYC", 64), entry("H100", "nvidia-sm:9.0")};
  prof::Identity id = db[1].identity;
  for (const auto& [cpu, threads, want] :
       {std::tuple<const char*, int, const char*>{"Xeon", 16, "one"},
        {"Xeon", 32, "two"},
        {"Xeon", 8, "one"},
        {"EPYC", 64, "epyc"},
        {"EPYC", 16, "epyc"},
        {"Ryzen", 32, "one"}}) {
    id.cpu_model = cpu;
    id.threads = threads;
    const prof::Profile* p = prof::builtin_entry("device", id, db);
    ASSERT_NE(p, nullptr) << cpu << " " << threads;
    EXPECT_EQ(p->origin, want) << cpu << " " << threads;
  }
  const prof::Profile* platform = prof::builtin_entry("platform", id, db);
  ASSERT_NE(platform, nullptr);
  EXPECT_EQ(platform->identity.device, "fallback");
  id.device = "H100";
  id.cpu_model = "Xeon";
  ASSERT_NE(prof::builtin_entry("device", id, db), nullptr);
  EXPECT_EQ(prof::builtin_entry("device", id, db)->identity.device, "H100");
  id.device = "A100";
  EXPECT_EQ(prof::builtin_entry("device", id, db), nullptr);
}

// The shipped database: an H200 (SM 9.0, not listed) takes the H100's entry, and says so.
TEST(Architecture, AnH200TakesTheH100sKernels) {
  prof::Identity id;
  id.platform = "NVIDIA CUDA";
  id.device = "NVIDIA H200";
  id.architecture = "nvidia-sm:9.0";
  std::string how;
  const prof::Profile* p = prof::nearest_architecture(id, prof::builtin(), &how);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->identity.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(how, "same architecture, nvidia-sm:9.0");
  const prof::Profile q = prof::from_json(prof::to_json(*p));
  EXPECT_EQ(q.identity.architecture, "nvidia-sm:9.0");
  std::string bad = prof::to_json(*p);
  bad.replace(bad.find("nvidia-sm:9.0"), 13, "sm90");
  EXPECT_THROW(prof::from_json(bad), std::runtime_error);
}

}  // namespace
}  // namespace tandem::test
