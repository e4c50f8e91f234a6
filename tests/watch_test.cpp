// src/plan/watch.hpp: auto watching its plans at run time. On the simulated APU (every call lasts
// as long as a model of a CPU and a device says), a profile's split that runs slower than the CPU
// alone's recorded rate is demoted after the configured calls (database/defaults.json's
// "watch"), with one TANDEM_VERBOSE line, and the calls after it run on the CPU alone, from one
// thread or several at once; a split faster than the CPU alone keeps its plan. Run under ctest,
// with TANDEM_VERBOSE=1 (the environment is read once per process).
#include "plan/watch.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "seam_values.hpp"
#include "simulated_apu.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

constexpr int64_t kSize = 128;
constexpr double kCpuGflops = 0.4;  // the CPU alone: 10.5 ms at 128^3, in the model and the profile
const std::string kDemoted = "the CPU alone takes them from now on";

TEST(Watch, TheRuleIsTheMedianBeyondTheMargin) {
  using detail::watch::slower_than_cpu;
  EXPECT_FALSE(slower_than_cpu({}, 0.1));
  EXPECT_TRUE(slower_than_cpu({1.5, 1.5, 1.5, 1.5, 1.5}, 0.1));
  EXPECT_FALSE(slower_than_cpu({1.05, 1.05, 1.05, 1.05, 1.05}, 0.1)) << "within the margin";
  EXPECT_FALSE(slower_than_cpu({0.5, 0.5, 0.5, 9, 9}, 0.1)) << "two slow calls in five";
  EXPECT_TRUE(slower_than_cpu({0.5, 0.5, 1.2, 9, 9}, 0.1)) << "three";
  EXPECT_TRUE(slower_than_cpu({1.0, 1.3}, 0.1)) << "an even count's median: 1.15";
}

// The simulated APU at `device_gflops`, and a profile for this device whose 128 bucket splits C
// in half, with the CPU alone measured at the model's rate.
class WatchedSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(std::getenv("TMPDIR")) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(dir_);
    setenv("TANDEM_PROFILE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { prof::forget(); }

  void profile_with_split() {
    prof::Profile p;
    p.identity = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
    p.tandem_version = TANDEM_VERSION;
    prof::PrecisionProfile pp;
    // A 16-row tile, so that the split's rows are what its fraction says.
    pp.gpu_kernel = {{"MWG", 16}, {"NWG", 16}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}};
    pp.gpu_size = kSize;
    pp.gpu_gflops = 1;
    prof::Bucket b;
    b.size = kSize;
    b.parts = 64;
    b.gpu_parts = 32;
    b.kernel = pp.gpu_kernel;
    b.cpu_gflops = kCpuGflops;
    b.gpu_gflops = 1;
    b.best_gflops = 1;
    pp.buckets = {b};
    p.precisions[detail::Precision::s] = pp;
    prof::save(p, prof::path_for(p.identity));
    prof::forget();
  }

  static detail::seams::Values apu(double device_gflops) {
    return detail::simulated_apu::on({kCpuGflops, device_gflops, 0.75});
  }

  // One auto call of the bucket's size: the rows the device took.
  static int64_t device_rows() {
    std::vector<float> a(kSize * kSize, 1.0f), b(kSize * kSize, 1.0f), c(kSize * kSize);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, kSize, kSize, kSize, 1.0f, a.data(),
                kSize, b.data(), kSize, 0.0f, c.data(), kSize, {}, &r);
    for (float x : c) EXPECT_EQ(x, float(kSize));
    EXPECT_FALSE(r.fell_back) << r.fallback_reason;
    return r.gpu_rows;
  }

  static int lines_saying(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  fs::path dir_;
};

// The device at 0.05 GFLOPS: half of C on it takes about 40 ms, four times the CPU alone's 10.5.
TEST_F(WatchedSplit, ASplitSlowerThanTheCpuAloneIsDemotedAfterTheConfiguredCalls) {
  ASSERT_STREQ(std::getenv("TANDEM_VERBOSE"), "1") << "run through ctest";
  profile_with_split();
  const detail::seams::Override apu_on(apu(0.05));
  const int calls = prof::watch_rule().calls;
  ::testing::internal::CaptureStderr();
  // The first call is not counted (it builds the kernel); then `calls` are, and the class goes.
  for (int i = 0; i < calls + 1; ++i) EXPECT_EQ(device_rows(), kSize / 2) << "call " << i;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(device_rows(), 0) << "after the demotion, call " << i;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, kDemoted), 1) << err;
  const size_t line = err.find("auto: sgemm calls of the profile's 128 bucket ran at a median ");
  ASSERT_NE(line, std::string::npos) << err;
  EXPECT_LT(line, err.find(kDemoted));
  EXPECT_EQ(err.find('\n', line), err.find(kDemoted) + kDemoted.size()) << "one line: " << err;
}

TEST_F(WatchedSplit, ASplitFasterThanTheCpuAloneKeepsItsPlan) {
  profile_with_split();
  // The device at 4 GFLOPS: the split takes about 3.5 ms against the CPU alone's 10.5.
  const detail::seams::Override apu_on(apu(4));
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3 * (prof::watch_rule().calls + 1); ++i)
    EXPECT_EQ(device_rows(), kSize / 2) << "call " << i;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, kDemoted), 0) << err;
}

// Calls of one class from several threads at once: one demotion, one line, and every call after
// it on the CPU alone.
TEST_F(WatchedSplit, ConcurrentCallsDemoteTheClassOnce) {
  profile_with_split();
  const detail::seams::Override apu_on(apu(0.05));
  EXPECT_EQ(device_rows(), kSize / 2) << "the first call, not counted, builds the kernel";
  ::testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int i = 0; i < prof::watch_rule().calls; ++i) device_rows();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(device_rows(), 0);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, kDemoted), 1) << err;
}

}  // namespace
}  // namespace tandem::test
