// src/plan/watch.hpp: auto watching its plans at run time. On the simulated APU (every call lasts
// as long as a model of a CPU and a device says), a profile's split that runs slower than the CPU
// alone's recorded rate is demoted after the configured calls (database/defaults.json's
// "watch"), with one TANDEM_VERBOSE line, and the calls after it run on the CPU alone, from one
// thread or several at once; a split faster than the CPU alone keeps its plan. A cost model's
// plan close to its CPU's predicted time is judged against one call timed on the CPU alone. Run
// under ctest, with TANDEM_VERBOSE=1 (the environment is read once per process).
#include "plan/watch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gpu/device.hpp"
#include "model/cost_model.hpp"
#include "plan/device_profile.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "seam_override.hpp"
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

// The cost model's plans, where the model's CPU is wrong: it predicts the CPU twice as slow as
// the simulated APU runs it (the H100 host's double-precision model at k = 64 predicted OpenBLAS
// 1.3-1.6 times slower than it ran). A plan the model finds close to the CPU alone's time has its
// class's second call timed on the CPU alone, and the class is judged against that time.
class WatchedModel : public WatchedSplit {
 protected:
  static constexpr int64_t kM = 256, kN = 256, kK = 32;  // no bucket measured it: the model plans

  // A profile whose model has a CPU of `cpu_gflops` and a device of `device_gflops` (its 256
  // bucket, the GPU alone, does not measure kM x kN x kK).
  void profile_with_model(double cpu_gflops, double device_gflops) {
    detail::cost::Model m;
    m.cpu.gflops_by_threads = {{1, cpu_gflops / 2}, {2, cpu_gflops}};
    m.cpu.half_m = m.cpu.half_n = m.cpu.half_k = 8;
    m.device.kernel_gflops = device_gflops;
    m.device.tile_m = m.device.tile_n = 32;
    m.device.compute_units = 2;
    m.device.pack_by_threads = {{1, 5e9}, {2, 9e9}};
    m.both_busy = m.cpu_busy = kBothBusy;
    prof::Profile p;
    p.identity = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
    p.tandem_version = TANDEM_VERSION;
    prof::PrecisionProfile pp;
    pp.gpu_kernel = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8}};
    pp.gpu_size = 256;
    prof::Bucket b;
    b.size = 256;
    b.parts = b.gpu_parts = 64;
    b.kernel = pp.gpu_kernel;
    pp.buckets = {b};
    pp.model = m;
    p.precisions[detail::Precision::s] = pp;
    prof::save(p, prof::path_for(p.identity));
    prof::forget();
    model_ = m;
  }

  static Report call() {
    std::vector<float> a(kM * kK, 1.0f), b(kK * kN, 1.0f), c(kM * kN, 1.0f);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, kM, kN, kK, 1.0f, a.data(), kK,
                b.data(), kN, 1.0f, c.data(), kN, {}, &r);
    for (float x : c) EXPECT_EQ(x, float(kK + 1));
    EXPECT_FALSE(r.fell_back) << r.fallback_reason;
    EXPECT_TRUE(r.profile_model);
    return r;
  }

  // The model's CPU seconds for the call, as the watch predicts them.
  double model_cpu_seconds() const {
    const detail::cost::Shape s{kM, kN, kK, 4, true, false};
    return model_.cpu.seconds(
        s, kM, std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads()));
  }

  // The simulated APU whose CPU runs the call in `cpu_time` times the model's time (half, unless
  // said) and whose device makes the model's plan (`gpu_rows` on the device) take `of_cpu` times
  // the CPU alone's real time.
  static detail::simulated_apu::Model apu_for(double model_cpu, int64_t gpu_rows, double of_cpu,
                                              double cpu_time = 0.5) {
    const double flops = 2.0 * kM * kN * kK * 1e-9, real_cpu = model_cpu * cpu_time;
    detail::simulated_apu::Model sim{flops / real_cpu, 0, kBothBusy};
    double low = 1e-6, high = 1e3;  // the device's rate, by bisection: time falls as it rises
    for (int i = 0; i < 200; ++i) {
      sim.gpu_gflops = std::sqrt(low * high);
      const double t = detail::simulated_apu::seconds(sim, gpu_rows, kM - gpu_rows, kN, kK);
      (t > of_cpu * real_cpu ? low : high) = sim.gpu_gflops;
    }
    return sim;
  }

  // The model of a close verdict (a CPU of 0.15 GFLOPS, about 37 ms for the call, and a device
  // half as fast), and the class's first call (not counted: it builds the kernel): `rows`, the
  // device's rows in the model's plan, a split.
  void start_close(int64_t* rows) {
    profile_with_model(0.15, 0.075);
    model_cpu_ = model_cpu_seconds();
    const Report first = call();
    *rows = first.gpu_rows;
    ASSERT_GT(*rows, 0);
    ASSERT_LT(*rows, kM) << "the model splits";
    ASSERT_GT(first.predicted_seconds, prof::watch_rule().close * model_cpu_) << "a close verdict";
  }
  // From now on the simulated APU of apu_for.
  void simulate(const detail::simulated_apu::Model& sim) {
    apu_.emplace(detail::simulated_apu::on(sim));
  }
  void TearDown() override {
    apu_.reset();
    WatchedSplit::TearDown();
  }

  static constexpr double kBothBusy = 0.9;
  detail::cost::Model model_;
  double model_cpu_ = 0;
  std::optional<detail::seams::Override> apu_;
};

TEST_F(WatchedModel, AClosePlanSlowerThanTheCpuItselfIsDemotedThoughNotThanTheModelsCpu) {
  int64_t rows = 0;
  ASSERT_NO_FATAL_FAILURE(start_close(&rows));
  // The plan takes 1.6 times the CPU's real time: 0.8 of the model's CPU time, which the watch
  // alone would let pass.
  const detail::simulated_apu::Model sim = apu_for(model_cpu_, rows, 1.6);
  ASSERT_LT(detail::simulated_apu::seconds(sim, rows, kM - rows, kN, kK) / model_cpu_,
            1 + prof::watch_rule().margin);
  simulate(sim);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(call().gpu_rows, 0) << "the second call: the CPU alone, timed";
  const int calls = prof::watch_rule().calls;
  for (int i = 0; i < calls; ++i) EXPECT_EQ(call().gpu_rows, rows) << "call " << i;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(call().gpu_rows, 0) << "after the demotion, call " << i;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, "one ran on the CPU alone in "), 1) << err;
  EXPECT_EQ(lines_saying(err, kDemoted), 1) << err;
  EXPECT_NE(err.find("(one of them timed on the CPU alone; profile "), std::string::npos) << err;
}

TEST_F(WatchedModel, AClosePlanFasterThanTheCpuItselfKeepsIt) {
  int64_t rows = 0;
  ASSERT_NO_FATAL_FAILURE(start_close(&rows));
  simulate(apu_for(model_cpu_, rows, 0.5));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(call().gpu_rows, 0) << "the second call: the CPU alone, timed";
  for (int i = 0; i < 3 * prof::watch_rule().calls; ++i)
    EXPECT_EQ(call().gpu_rows, rows) << "call " << i;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, "one ran on the CPU alone in "), 1) << err;
  EXPECT_EQ(lines_saying(err, kDemoted), 0) << err;
}

// A timed CPU slower than the model's does not loosen the rule: the plan, at 1.3 times the model's
// CPU time but 0.65 of the CPU's real time, is demoted as it was before any timing.
TEST_F(WatchedModel, ASlowTimedCpuLeavesTheClassJudgedByThePrediction) {
  int64_t rows = 0;
  ASSERT_NO_FATAL_FAILURE(start_close(&rows));
  simulate(apu_for(model_cpu_, rows, 0.65, 2));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(call().gpu_rows, 0) << "the second call: the CPU alone, timed";
  for (int i = 0; i < prof::watch_rule().calls; ++i)
    EXPECT_EQ(call().gpu_rows, rows) << "call " << i;
  EXPECT_EQ(call().gpu_rows, 0) << "demoted";
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, "the next are judged against the prediction"), 1) << err;
  EXPECT_NE(err.find("(its recorded rate; profile "), std::string::npos) << err;
}

// Calls of one close class from several threads at once: one of them, and only one, is timed on
// the CPU alone (the sanitizer builds run it under TSan).
TEST_F(WatchedModel, ConcurrentCallsTimeTheCpuOnce) {
  int64_t rows = 0;
  ASSERT_NO_FATAL_FAILURE(start_close(&rows));
  simulate(apu_for(model_cpu_, rows, 0.5));
  ::testing::internal::CaptureStderr();
  std::atomic<int> on_cpu{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 3; ++i)
        if (call().gpu_rows == 0) ++on_cpu;
    });
  for (auto& t : threads) t.join();
  const std::string err = ::testing::internal::GetCapturedStderr();
  // Calls of one device wait for each other, so the class may also be demoted (the CPU alone
  // then takes the calls after it): a timing line says which call was the timed one.
  EXPECT_GE(on_cpu.load(), 1);
  EXPECT_EQ(lines_saying(err, "one ran on the CPU alone in "), 1) << err;
}

// A plan the model finds far faster than the CPU alone is never put on the CPU to be timed.
TEST_F(WatchedModel, AClearVerdictIsNotTimedOnTheCpu) {
  profile_with_model(0.15, 1.5);
  const double model_cpu = model_cpu_seconds();
  const detail::seams::Override apu_on(detail::simulated_apu::on({0.15, 1.5, kBothBusy}));
  const Report first = call();
  ASSERT_GT(first.gpu_rows, 0);
  ASSERT_LT(first.predicted_seconds, prof::watch_rule().close * model_cpu) << "a clear verdict";
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2 * prof::watch_rule().calls; ++i)
    EXPECT_EQ(call().gpu_rows, first.gpu_rows) << "call " << i;
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(lines_saying(err, "one ran on the CPU alone in "), 0) << err;
}

}  // namespace
}  // namespace tandem::test
