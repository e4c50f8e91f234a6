// The simulated APU (tests/support/simulated_apu.hpp): its timing model, the executor's calls
// lasting as long as that model says, and the co-tuner finding a split within 5% of the model's
// optimum, where the CPU and the device each slow to 75% while both are busy (what RaijinCL
// measured on an Ivy Bridge APU).
#include "simulated_apu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "cotuner.hpp"
#include "plan/plan.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "seam_values.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace apu = detail::simulated_apu;
namespace prof = detail::profile;

// Rates slow enough that PoCL and OpenBLAS finish each call's real work well inside the modelled
// time, even on a loaded CI machine: every call then lasts exactly as long as the model says. At
// size 128 a split's real work took 0.05-0.12 of the model's time here; at 256 and eight times
// these rates it took 0.26-0.54, and a loaded machine overran that in confirm_test's tune.
constexpr double kCpuGflops = 0.1, kGpuGflops = 0.15, kBothBusy = 0.75;
constexpr int64_t kSize = 128;

const apu::Model kModel{kCpuGflops, kGpuGflops, kBothBusy};

detail::seams::Values apu_seams() { return apu::on(kModel); }

// The model's optimum over every split of m rows: both sides finish together, at the summed
// slowed rates.
double optimum_seconds(int64_t m = kSize, int64_t n = kSize, int64_t k = kSize) {
  const double gflop = 2.0 * static_cast<double>(m * n * k) * 1e-9;
  return gflop / (kBothBusy * (kCpuGflops + kGpuGflops));
}

TEST(SimulatedApu, OneSideRunsAtItsFullRate) {
  const double row = 2.0 * 100 * 50 * 1e-9;
  EXPECT_DOUBLE_EQ(apu::seconds(kModel, 0, 10, 100, 50), 10 * row / kCpuGflops);
  EXPECT_DOUBLE_EQ(apu::seconds(kModel, 10, 0, 100, 50), 10 * row / kGpuGflops);
}

TEST(SimulatedApu, BothSidesSlowUntilTheFirstIsDone) {
  // 60 device rows and 40 CPU rows finish together at the slowed rates (the device's is 1.5 times
  // the CPU's, as its full rate is).
  const double row = 2.0 * 100 * 50 * 1e-9;
  EXPECT_NEAR(apu::seconds(kModel, 60, 40, 100, 50), 60 * row / (kBothBusy * kGpuGflops), 1e-15);
  // 80 device rows, 20 CPU rows: when the CPU is done, the device has done 1.5 * 20 = 30 rows,
  // leaving 50 at its full rate.
  const double both = 20 * row / (kBothBusy * kCpuGflops);
  EXPECT_NEAR(apu::seconds(kModel, 80, 20, 100, 50), both + 50 * row / kGpuGflops, 1e-15);
  // That balanced split is the optimum, below either side alone and off it either way.
  const double best = apu::seconds(kModel, 60, 40, 100, 50);
  EXPECT_NEAR(best, optimum_seconds(100, 100, 50), 1e-15);
  for (int64_t g : {0, 50, 59, 61, 70, 100})
    EXPECT_GT(apu::seconds(kModel, g, 100 - g, 100, 50), best) << g << " device rows";
}

TEST(SimulatedApu, ACallLastsAsLongAsTheModelSays) {
  const detail::seams::Override apu_on(apu_seams());
  std::vector<float> a(kSize * kSize, 1.0f), b(kSize * kSize, 1.0f), c(kSize * kSize);
  // Twice each: the first builds the kernel.
  for (const double fraction : {0.0, 0.5, 1.0, 0.0, 0.5, 1.0}) {
    Options o;
    o.strategy = fraction == 0 ? Strategy::Cpu : fraction == 1 ? Strategy::Gpu : Strategy::Hybrid;
    o.gpu_fraction = fraction;
    Report r;
    const detail::clock::Stopwatch call;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, kSize, kSize, kSize, 1.0f, a.data(),
                kSize, b.data(), kSize, 0.0f, c.data(), kSize, o, &r);
    const double s = call.seconds();
    for (float x : c) ASSERT_EQ(x, float(kSize));
    const double model = apu::seconds(kModel, r.gpu_rows, r.cpu_rows, kSize, kSize);
    EXPECT_GE(s, model) << "fraction " << fraction;
  }
}

// A tune on the model (apu::on_the_model): each further try without the last one's log and
// profile.
tuner::TuneReport tune_on_the_model(const tuner::TuneOptions& o) {
  return apu::on_the_model([&o] { return tuner::tune(o); },
                           [](const tuner::TuneReport& r) {
                             std::filesystem::remove(r.log);
                             std::filesystem::remove(r.saved);
                             prof::forget();
                           });
}

// The co-tuner searches the split on the simulated APU (every call it times lasts as long as the
// model says) and saves its profile; auto then plans a call of the tuned size from that profile,
// and the model's time for the rows each side got is within 5% of the model's optimum (76.8
// device rows). The kernel's 16-row tile puts 80 rows within 2% of it; 64 are over 5% off.
TEST(SimulatedApu, TheCoTunerFindsASplitWithinFivePercentOfTheOptimum) {
  prof::forget();
  const detail::seams::Override apu_on(apu_seams());
  tuner::TuneOptions o;
  o.precisions = {detail::Precision::s};
  o.sizes = {kSize};
  o.kernel_size = kSize;
  o.budget_evaluations = 1;  // the start kernel: its 16-row tile leaves the split fine steps
  o.top_kernels = 1;
  o.start = {{"MWG", 16}, {"NWG", 16}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}};
  o.reps = 3;
  o.parts = 64;
  o.direct = false;
  o.batch = false;  // cotuner_test measures the batch rule
  const tuner::TuneReport report = tune_on_the_model(o);
  ASSERT_FALSE(report.saved.empty());
  const prof::Bucket& b = report.profile.precisions.at(detail::Precision::s).buckets.at(0);
  std::cout << "kept p_g " << b.gpu_parts << "/" << b.parts << ", " << b.cpu_threads
            << " CPU threads, " << (b.dynamic ? "dynamic" : "static") << "\n";
  prof::forget();
  std::vector<float> a(kSize * kSize, 1.0f), bm(kSize * kSize, 1.0f), c(kSize * kSize);
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, kSize, kSize, kSize, 1.0f, a.data(),
              kSize, bm.data(), kSize, 0.0f, c.data(), kSize, {}, &r);
  for (float x : c) ASSERT_EQ(x, float(kSize));
  ASSERT_EQ(r.strategy, Strategy::Hybrid) << "a split is 1.25x faster than either side alone";
  const double planned = apu::seconds(kModel, r.gpu_rows, r.cpu_rows, kSize, kSize);
  const double best = optimum_seconds();
  EXPECT_LE(planned, best * 1.05) << r.gpu_rows << " device rows and " << r.cpu_rows
                                  << " CPU rows: the model's " << planned
                                  << " s against its optimum " << best << " s";
  // The tile argument above, so that this test can fail: a split two tiles off is over 5%.
  EXPECT_LT(apu::seconds(kModel, 80, kSize - 80, kSize, kSize), best * 1.02);
  EXPECT_GT(apu::seconds(kModel, 64, kSize - 64, kSize, kSize), best * 1.05);
}

}  // namespace
}  // namespace tandem::test
