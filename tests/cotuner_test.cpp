// The co-tuner end to end on the default OpenCL device (PoCL here) with tiny budgets, and device
// profiles: round trip, a profile for another setup, an incompatible or corrupt file, and the
// choice a profile makes for a call.
#include "cotuner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cotuner_checks.hpp"
#include "gemm_measure.hpp"
#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "plan/feed_cost.hpp"
#include "profile/choice.hpp"
#include "profile/database.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "profile/tune_log.hpp"
#include "seam_values.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;

// Each test gets its own profile directory.
class ProfileDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tandem-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("TANDEM_PROFILE_DIR", dir_.c_str(), 1);
    prof::forget();
  }
  void TearDown() override {
    fs::remove_all(dir_);
    prof::forget();
  }
  prof::Identity here() const {
    return prof::identity_for(detail::gpu::info(*detail::gpu::open_device("")));
  }
  fs::path dir_;
};

tuner::TuneOptions tiny() {
  tuner::TuneOptions o;
  o.precisions = {detail::Precision::s, detail::Precision::d};
  o.budget_evaluations = 3;
  o.sizes = {64, 128};
  o.kernel_size = 128;
  o.reps = 2;
  o.top_kernels = 1;
  o.parts = 16;
  o.direct = false;         // DirectOnlyTunesTheDirectKernelAndItsThreshold tunes it
  o.batch = false;          // BatchOnlyMeasuresWhereDealingPays measures it
  o.small_evaluations = 0;  // ASmallBucketSearchesSmallTilesAtItsOwnSize searches them
  return o;
}

// The records of one kind in a tuning log.
int log_lines(const fs::path& log, const std::string& kind) {
  std::ifstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line);)
    lines += line.find("\"kind\":\"" + kind + "\"") != std::string::npos ? 1 : 0;
  return lines;
}

// The last record of one kind in a tuning log.
prof::LogRecord last_record(const fs::path& log, const std::string& kind) {
  std::ifstream in(log);
  prof::LogRecord last;
  for (std::string line; std::getline(in, line);)
    if (const auto r = prof::from_log_line(line); r && r->kind == kind) last = *r;
  return last;
}

int confirm_sets() { return prof::confirm_rule().batch_sets_where_too_noisy; }

Report run_auto(int64_t n) {
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n, {}, &r);
  for (float x : c) EXPECT_EQ(x, float(n));
  return r;
}

TEST_F(ProfileDir, TuneWritesAValidProfileThatAutoThenUses) {
  const auto report = tuner::tune(tiny());
  ASSERT_EQ(report.saved, prof::path_for(here()));
  const prof::Profile p = prof::load(report.saved);
  EXPECT_EQ(p.identity, here());
  EXPECT_TRUE(prof::compatible(p));
  for (detail::Precision prec : {detail::Precision::s, detail::Precision::d}) {
    ASSERT_TRUE(p.precisions.count(prec)) << prec;
    const auto& pp = p.precisions.at(prec);
    EXPECT_FALSE(pp.gpu_kernel.empty()) << "a GPU-only kernel is always stored";
    EXPECT_GT(pp.gpu_gflops, 0.0);
    ASSERT_EQ(pp.buckets.size(), 2u);
    for (const auto& b : pp.buckets) {
      EXPECT_GT(b.cpu_gflops, 0.0);
      EXPECT_GE(b.gpu_parts, 0);
      EXPECT_LE(b.gpu_parts, b.parts);
      EXPECT_EQ(b.parts, 16);
      // The rate of what the bucket keeps, as its search measured it: the CPU alone's where the
      // confirmation rounds left the bucket to the CPU (the search's medians may have had the GPU
      // ahead), else at least the CPU alone's.
      if (b.gpu_parts == 0) {
        EXPECT_NEAR(b.best_gflops, b.cpu_gflops, 1e-9);
      } else {
        EXPECT_GE(b.best_gflops, b.cpu_gflops);
      }
    }
  }
  EXPECT_EQ(p.tuning.strategy, "phased");
  EXPECT_GE(p.tuning.evaluations, 2);

  // auto now follows it: the report names the profile and the bucket, and the split is the
  // bucket's.
  const Report r = run_auto(128);
  EXPECT_EQ(r.profile.rfind(report.saved.string(), 0), 0u) << r.profile;  // then what it lacks
  EXPECT_EQ(r.profile_bucket, 128);
  const auto& bucket = p.precisions.at(detail::Precision::s).buckets.back();
  EXPECT_EQ(r.gpu_rows > 0, bucket.gpu_parts > 0);
  EXPECT_NEAR(r.gpu_fraction, bucket.fraction(), 1e-12);
  // Below half the smallest tuned size the CPU alone is used: nothing was measured there.
  EXPECT_EQ(run_auto(16).gpu_rows, 0);
}

// Without --sizes, the buckets follow the device's speed: PoCL's rate gives what the tuner always
// used there, the H100 entry's the sizes it was tuned at, and a device's memory caps the largest.
TEST(BucketSizes, FollowTheDevicesRateAndMemory) {
  using V = std::vector<int64_t>;
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  EXPECT_EQ(tuner::bucket_sizes(27.7, 2 * kGiB, 4), (V{256, 512, 1024}));      // PoCL, sgemm
  EXPECT_EQ(tuner::bucket_sizes(13405, 80 * kGiB, 4), (V{2048, 4096, 8192}));  // H100, sgemm
  EXPECT_EQ(tuner::bucket_sizes(6664, 80 * kGiB, 8), (V{1024, 2048, 4096}));   // H100, dgemm
  EXPECT_EQ(tuner::bucket_sizes(1e9, 80 * kGiB, 4).back(), 16384) << "max_size";
  // 3 n^2 doubles in a quarter of 1 GiB: n = 2048 fits (96 MiB), 4096 (384 MiB) does not.
  EXPECT_EQ(tuner::bucket_sizes(1e9, kGiB, 8), (V{512, 1024, 2048}));
  EXPECT_EQ(tuner::bucket_sizes(0.5, 0, 4), (V{256})) << "never below min_size";
}

// Without --sizes and --start, a tune measures at the sizes the applying profile's rate gives and
// starts from that profile's kernel: a tune of one candidate keeps it.
TEST_F(ProfileDir, AnUnsizedTuneFollowsTheProfileThatApplies) {
  prof::Profile p;
  p.identity = here();
  p.tandem_version = TANDEM_VERSION;
  prof::PrecisionProfile pp;
  pp.gpu_kernel = prof::kernel_defaults(false);
  pp.gpu_kernel["MWG"] = 32;
  pp.gpu_kernel["NWG"] = 32;
  pp.gpu_kernel["MDIMC"] = 8;
  pp.gpu_kernel["NDIMC"] = 8;
  pp.gpu_kernel["VW"] = 2;
  pp.gpu_size = 256;
  pp.gpu_gflops = 1e-3;  // slow enough that the buckets are min_size alone
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(p.identity));
  prof::forget();

  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.sizes.clear();
  o.kernel_size = 0;
  o.budget_evaluations = 1;
  o.model = false;
  o.save = false;
  const auto report = tuner::tune(o);
  const auto& tuned = report.profile.precisions.at(detail::Precision::s);
  EXPECT_EQ(tuned.gpu_size, 256);
  ASSERT_EQ(tuned.buckets.size(), 1u);
  EXPECT_EQ(tuned.buckets[0].size, 256);
  for (const char* name : {"MWG", "NWG", "MDIMC", "NDIMC", "VW"})
    EXPECT_EQ(tuned.gpu_kernel.at(name), pp.gpu_kernel.at(name)) << name;
}

// Tuning one precision keeps what the saved profile holds for the other.
TEST_F(ProfileDir, TuningOnePrecisionKeepsTheOther) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.sizes = {64};
  o.kernel_size = 64;
  tuner::tune(o);
  o.precisions = {detail::Precision::d};
  const auto report = tuner::tune(o);
  const prof::Profile p = prof::load(report.saved);
  EXPECT_EQ(p.precisions.count(detail::Precision::s), 1u) << "sgemm's tuning was lost";
  EXPECT_EQ(p.precisions.count(detail::Precision::d), 1u);
  for (const auto& [prec, pp] : p.precisions)
    EXPECT_EQ(pp.based_on, "") << prec << ": a whole tune measured the whole section here";
}

// Fitting the cost model alone starts from the profile that applies (here the built-in entry) and
// saves what it fitted for the precision it was asked for, nothing else: the entry goes on
// serving the others, and a later change to the entry still reaches them.
TEST_F(ProfileDir, AModelFitAloneSavesOnlyItsPrecision) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.model_only = true;
  const std::string entry = prof::active(here())->precisions.at(detail::Precision::s).source;
  ASSERT_EQ(entry.rfind("built-in:", 0), 0u) << entry;
  o.save = false;
  EXPECT_EQ(tuner::tune(o).profile.tuning.strategy, "model-only") << "unsaved, the same record";
  o.save = true;
  const auto report = tuner::tune(o);
  const prof::Profile p = prof::load(report.saved);
  ASSERT_EQ(p.precisions.size(), 1u);
  ASSERT_TRUE(p.precisions.count(detail::Precision::s));
  ASSERT_EQ(report.precisions.size(), 1u);
  // The file's tuning record is this run's: the entry's describes a tune on another machine.
  EXPECT_EQ(p.tuning.strategy, "model-only");
  EXPECT_FALSE(p.tuning.date.empty());
  EXPECT_GT(p.tuning.seconds, 0);
  EXPECT_NEAR(p.tuning.seconds, report.seconds, 0.5) << "the run's time";
  EXPECT_EQ(report.precisions[0].model_failure, "");
  EXPECT_TRUE(p.precisions.at(detail::Precision::s).model.has_value());
  const auto active = prof::active(here());
  ASSERT_TRUE(active);
  EXPECT_GT(active->precisions.size(), 1u) << "the entry's other precisions still apply";
  // The saved section says which entry the rest of it is, and that the model was fitted here;
  // a direct phase then starts from that local section and keeps both.
  const prof::PrecisionProfile& fitted = p.precisions.at(detail::Precision::s);
  EXPECT_EQ(fitted.based_on, entry);
  EXPECT_EQ(fitted.measured, std::vector<std::string>{"model"});
  o.model_only = false;
  o.direct_only = true;
  o.direct_size = 32;
  o.direct_sizes = {16, 32};
  o.direct_evaluations = 2;
  const prof::Profile again = prof::load(tuner::tune(o).saved);
  EXPECT_EQ(again.tuning.strategy, "model-only") << "a local file keeps its record";
  EXPECT_EQ(again.tuning.seconds, p.tuning.seconds);
  const prof::PrecisionProfile& direct = again.precisions.at(detail::Precision::s);
  EXPECT_EQ(direct.based_on, entry);
  ASSERT_GE(direct.measured.size(), 2u);
  EXPECT_EQ(direct.measured.front(), "model");
  EXPECT_EQ(direct.measured.back().rfind("direct_", 0), 0u) << direct.measured.back();
}

// Complex precisions are tuned as the real ones are: their sections hold a kernel, buckets with
// rates counted at 8 flops a multiply-add, and a cost model where the fit keeps one; auto then
// plans a complex call by them.
TEST_F(ProfileDir, ComplexPrecisionsAreTunedAndAutoUsesThem) {
  auto o = tiny();
  o.precisions = {detail::Precision::c, detail::Precision::z};
  const auto report = tuner::tune(o);
  const prof::Profile p = prof::load(report.saved);
  for (detail::Precision prec : o.precisions) {
    ASSERT_TRUE(p.precisions.count(prec)) << prec;
    const auto& pp = p.precisions.at(prec);
    EXPECT_FALSE(pp.gpu_kernel.empty()) << prec;
    EXPECT_GT(pp.gpu_gflops, 0.0) << prec;
    ASSERT_EQ(pp.buckets.size(), 2u) << prec;
    for (const auto& b : pp.buckets) EXPECT_GT(b.cpu_gflops, 0.0) << prec;
    // The fit may refuse what a loaded machine measured (CostModel.ComplexCallsCountEightFlops...
    // checks the complex fit itself); what it keeps is usable, and what it refuses it says.
    const auto summary = std::find_if(report.precisions.begin(), report.precisions.end(),
                                      [&](const auto& x) { return x.precision == prec; });
    ASSERT_NE(summary, report.precisions.end()) << prec;
    EXPECT_EQ(pp.model.has_value(), summary->model_failure.empty()) << summary->model_failure;
    if (pp.model) {
      EXPECT_TRUE(pp.model->usable()) << pp.model->problem();
    }
  }
  EXPECT_FALSE(p.precisions.count(detail::Precision::s)) << "only what was asked is tuned";

  const int64_t n = 128;
  using Z = std::complex<double>;
  std::vector<Z> a(n * n, Z(1, 1)), b(n * n, Z(1, -2)), c(n * n, Z(0, 0));
  Report r;
  gemm<Z>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, Z(1), a.data(), n, b.data(), n, Z(0),
          c.data(), n, {}, &r);
  for (const Z& x : c) ASSERT_EQ(x, Z(3.0 * n, -1.0 * n));                // (1 + i)(1 - 2i) = 3 - i
  EXPECT_EQ(r.profile.rfind(report.saved.string(), 0), 0u) << r.profile;  // then what it lacks
  EXPECT_EQ(r.profile_bucket, n);
  const auto& bucket = p.precisions.at(detail::Precision::z).buckets.back();
  EXPECT_EQ(r.gpu_rows > 0, bucket.gpu_parts > 0);
}

// Every record of a tune's log.
std::vector<prof::LogRecord> log_of(const tuner::TuneReport& report) {
  std::vector<prof::LogRecord> records;
  std::ifstream in(report.log);
  for (std::string line; std::getline(in, line);)
    if (auto r = prof::from_log_line(line)) records.push_back(*r);
  return records;
}

// The matrix-engine codelet is searched only where the device's probe proved it: never on PoCL
// as it is, and, with the seam that emulates the instruction, beside the generic kernels (its
// candidates logged as "engine" records and ranked with them).
TEST_F(ProfileDir, TheEngineIsSearchedOnlyWhereItsProbeSaidYes) {
  auto o = tiny();
  o.precisions = {detail::Precision::d};
  o.sizes = {64};
  o.kernel_size = 64;
  o.model = false;
  const auto without = tuner::tune(o);
  ASSERT_EQ(without.precisions.size(), 1u);
  EXPECT_EQ(without.precisions[0].engine_evaluations, 0);
  const auto plain = log_of(without);
  ASSERT_FALSE(plain.empty());
  for (const auto& r : plain) {
    EXPECT_NE(r.kind, "engine");
    EXPECT_NE(r.kernel.count("KERNEL") ? r.kernel.at("KERNEL") : 0, 3) << prof::to_log_line(r);
  }

  fs::remove_all(dir_);
  fs::create_directories(dir_);
  prof::forget();
  detail::seams::Values v;
  v.emulate_engine = true;
  detail::seams::Override scope(v);
  const auto with = tuner::tune(o);
  EXPECT_GT(with.precisions[0].engine_evaluations, 0);
  int engine_records = 0;
  for (const auto& r : log_of(with))
    if (r.kind == "engine") {
      ++engine_records;
      EXPECT_EQ(r.kernel.at("KERNEL"), 3) << prof::to_log_line(r);
    }
  EXPECT_GT(engine_records, 0);
}

// The checks read both parts of a complex result: a kernel whose imaginary parts are wrong in one
// element never gets rows.
TEST_F(ProfileDir, AWrongImaginaryPartIsExcluded) {
  auto o = tiny();
  o.precisions = {detail::Precision::c};
  o.sizes = {64};
  o.kernel_size = 64;
  o.save = false;
  o.tamper = [](void* c, int64_t n, detail::Precision precision, bool) {
    if (precision == detail::Precision::c && n > 0) static_cast<float*>(c)[1] += 1.0f;
  };
  const auto report = tuner::tune(o);
  ASSERT_EQ(report.precisions.size(), 1u);
  const auto& s = report.precisions[0];
  EXPECT_EQ(s.failures, s.evaluations);
  const auto& pp = report.profile.precisions.at(detail::Precision::c);
  EXPECT_TRUE(pp.gpu_kernel.empty());
  for (const auto& b : pp.buckets) EXPECT_EQ(b.gpu_parts, 0) << "a wrong GPU must never get rows";
}

TEST_F(ProfileDir, WrongResultsAreExcluded) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.save = false;
  // Play a kernel that gets one element wrong: every GPU run must fail its check.
  o.tamper = [](void* c, int64_t n, detail::Precision precision, bool) {
    if (precision == detail::Precision::s && n > 0) static_cast<float*>(c)[0] += 1.0f;
  };
  const auto report = tuner::tune(o);
  ASSERT_EQ(report.precisions.size(), 1u);
  const auto& s = report.precisions[0];
  EXPECT_EQ(s.failures, s.evaluations);
  ASSERT_FALSE(s.failure_reasons.empty());
  EXPECT_NE(s.failure_reasons[0].find("check"), std::string::npos) << s.failure_reasons[0];
  const auto& pp = report.profile.precisions.at(detail::Precision::s);
  EXPECT_TRUE(pp.gpu_kernel.empty());
  for (const auto& b : pp.buckets) EXPECT_EQ(b.gpu_parts, 0) << "a wrong GPU must never get rows";
}

// Only split runs are wrong: the kernels pass, the split search must never choose a hybrid.
TEST_F(ProfileDir, AWrongHybridIsNeverChosen) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.save = false;
  int tampered = 0;
  o.tamper = [&tampered](void* c, int64_t n, detail::Precision precision, bool split) {
    if (split && precision == detail::Precision::s && n > 0) {
      static_cast<float*>(c)[n - 1] += 1.0f;  // the corner the cheap check reads
      ++tampered;
    }
  };
  const auto report = tuner::tune(o);
  EXPECT_GT(tampered, 0) << "the split search measured no hybrid";
  EXPECT_EQ(report.precisions[0].failures, 0);
  for (const auto& b : report.profile.precisions.at(detail::Precision::s).buckets)
    EXPECT_TRUE(b.gpu_parts == 0 || b.gpu_parts == b.parts)
        << "a wrong hybrid was chosen at " << b.size;
}

TEST_F(ProfileDir, AnInterruptedRunResumesFromItsLog) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.log = dir_ / "tune.jsonl";
  o.budget_evaluations = 2;
  const auto first = tuner::tune(o);
  auto count = [&] {
    std::ifstream in(o.log);
    return static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
  };
  const int lines = count();
  EXPECT_GT(lines, 2);
  // The same run again: everything is in the log, nothing is measured twice.
  const auto second = tuner::tune(o);
  EXPECT_EQ(second.precisions[0].resumed, first.precisions[0].evaluations);
  EXPECT_EQ(second.precisions[0].evaluations, 0);
  EXPECT_EQ(count(), lines);
  // A bigger budget measures only the new candidates.
  o.budget_evaluations = 3;
  const auto third = tuner::tune(o);
  EXPECT_EQ(third.precisions[0].evaluations, 1);
}

// A bucket whose calls give phase 1's best kernel fewer work-groups than two waves of the device
// (any kernel at 16^3) gets kernels of its own: the small-tile space searched at the bucket's
// size, logged as "small" records, resumed from them, and its best measured in the bucket's split
// search beside phase 1's. A CPU device searches none unless asked.
TEST_F(ProfileDir, ASmallBucketSearchesSmallTilesAtItsOwnSize) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.sizes = {16};
  o.kernel_size = 16;
  o.budget_evaluations = 1;
  o.model = false;
  o.log = dir_ / "tune.jsonl";
  const auto records = [&o](const std::string& kind, int64_t size) {
    std::vector<prof::LogRecord> out;
    std::ifstream in(o.log);
    for (std::string line; std::getline(in, line);)
      if (auto r = prof::from_log_line(line); r && r->kind == kind && r->size == size)
        out.push_back(*r);
    return out;
  };
  o.small_evaluations = -1;  // the default
  if (!detail::gpu::info(*detail::gpu::open_device("")).is_gpu) {
    tuner::tune(o);
    EXPECT_TRUE(records("small", 16).empty()) << "the default on a CPU device is none";
  }

  fs::remove(o.log);
  o.small_evaluations = 2;
  const auto first = tuner::tune(o);
  const auto small = records("small", 16);
  ASSERT_EQ(small.size(), 2u);
  const prof::LogRecord* best = nullptr;
  for (const auto& r : small) {
    EXPECT_EQ(r.kernel.at("KERNEL"), 1);
    EXPECT_EQ(r.kernel.at("A_T"), -1) << "read as stored: no transpose launch";
    EXPECT_EQ(r.kernel.at("B_T"), -1);
    EXPECT_LE(r.kernel.at("MWG"), 64);
    if (r.seconds && (best == nullptr || r.cost < best->cost)) best = &r;
  }
  ASSERT_NE(best, nullptr) << "neither small-tile kernel ran";
  // Split records carry the discrete pipeline's settings too; the kernel is the rest.
  const auto without_pipeline = [](std::map<std::string, int> k) {
    k.erase("CHUNK_FILL");
    k.erase("QUEUES");
    return k;
  };
  bool measured_alone = false;
  for (const auto& r : records("split", 16))
    measured_alone |=
        without_pipeline(r.kernel) == without_pipeline(best->kernel) && r.gpu_parts == r.parts;
  EXPECT_TRUE(measured_alone) << "the best small-tile kernel, GPU alone, in the split search";

  EXPECT_EQ(first.precisions[0].small_evaluations, 2);
  EXPECT_EQ(first.profile.tuning.evaluations,
            first.precisions[0].evaluations + 2 + first.precisions[0].resumed);

  // Everything is in the log: the same run measures nothing again.
  const auto second = tuner::tune(o);
  EXPECT_EQ(second.precisions[0].evaluations, 0);
  EXPECT_EQ(second.precisions[0].small_evaluations, 0);
  EXPECT_EQ(second.precisions[0].resumed, first.precisions[0].evaluations + 2);
}

// tune --direct-only: the direct kernel's own space searched (each candidate checked, logged and
// resumed as phase 1's are), then its threshold measured against the profile's own kernels from
// the smallest size up; both saved in a local profile, which calls then follow.
TEST_F(ProfileDir, DirectOnlyTunesTheDirectKernelAndItsThreshold) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.direct_only = true;
  o.direct_size = 48;
  o.direct_sizes = {64, 16, 32};  // measured in ascending order whatever the order given
  o.direct_evaluations = 4;
  o.log = dir_ / "tune.jsonl";
  const auto report = tuner::tune(o);
  const prof::Profile p = prof::load(report.saved);
  const auto& pp = p.precisions.at(detail::Precision::s);
  EXPECT_EQ(pp.direct_kernel.at("KERNEL"), 2);
  EXPECT_FALSE(pp.direct_kernel.count("SA")) << "a direct kernel names its own parameters";
  EXPECT_EQ(pp.direct_size, 48);
  EXPECT_GT(pp.direct_gflops, 0.0);
  ASSERT_TRUE(pp.direct_below.has_value());
  ASSERT_EQ(report.precisions.size(), 1u);
  const auto& s = report.precisions[0];
  EXPECT_EQ(s.direct_evaluations, 4);
  // The file's record is this run's (it started from the built-in entry), its candidates counted.
  EXPECT_EQ(p.tuning.strategy, "direct-only");
  EXPECT_EQ(p.tuning.evaluations, 4);
  // The threshold follows the verdicts: the geometric middle of the last win and the first loss.
  ASSERT_FALSE(s.direct_verdicts.empty());
  EXPECT_EQ(s.direct_verdicts.front().first, 16);
  int64_t won = 0, lost = 0;
  for (const auto& [size, winner] : s.direct_verdicts) {
    if (winner != "direct") {
      lost = size;
      break;
    }
    won = size;
  }
  const int64_t expected = lost == 0  ? std::llround(static_cast<double>(won) * std::sqrt(2.0))
                           : won == 0 ? 0
                                      : std::llround(std::sqrt(static_cast<double>(won * lost)));
  EXPECT_EQ(*pp.direct_below, expected);
  // Calls follow it.
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  std::vector<float> a(8 * 8, 1.0f), c(8 * 8, 0.0f);
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 8, 8, 8, 1.0f, a.data(), 8, a.data(), 8,
              0.0f, c.data(), 8, gpu, &r);
  EXPECT_EQ(r.kernel.find("KERNEL=2") != std::string::npos, *pp.direct_below > 8) << r.kernel;
  EXPECT_EQ(r.profile.rfind(report.saved.string(), 0), 0u) << r.profile;  // then what it lacks
  // The same run again measures no candidate twice: the log gains threshold records alone.
  const auto direct_lines = [&] { return log_lines(o.log, "direct"); };
  const int before = direct_lines();
  EXPECT_EQ(before, 4);
  const auto again = tuner::tune(o);
  EXPECT_EQ(direct_lines(), before);
  EXPECT_EQ(prof::load(again.saved).precisions.at(detail::Precision::s).direct_kernel,
            pp.direct_kernel);
}

// The batch rule's edge follows the verdicts measured from the largest size down: between the
// last size where dealing lost and the next one up (their geometric middle), the smallest size
// measured where it won everywhere, half a doubling above the largest where it ran there but lost,
// and never where it failed there.
TEST(BatchRule, TheEdgeFollowsTheVerdictsFromTheLargestSizeDown) {
  const auto rule = [](std::vector<std::pair<int64_t, const char*>> measured) {
    std::vector<prof::BatchPoint> points;
    for (const auto& [size, verdict] : measured)
      points.push_back({size, 100, 1, 2, verdict, "", 0, std::nullopt, std::nullopt, std::nullopt});
    return tuner::batch_rule_from(points);
  };
  EXPECT_EQ(rule({{512, "faster"}, {256, "faster"}, {128, "not faster"}}).devices_from, 181);
  EXPECT_EQ(rule({{512, "faster"}, {256, "too noisy"}}).devices_from, 362);
  EXPECT_EQ(rule({{512, "faster"}, {256, "faster"}}).devices_from, 256);
  // Dealing ran at the largest size but did not pay: from half a doubling above it.
  EXPECT_EQ(rule({{512, "too noisy"}}).devices_from, 724);
  EXPECT_EQ(rule({{512, "not faster"}, {256, "faster"}}).devices_from, 724);
  // It failed there (no times): never.
  EXPECT_EQ(tuner::batch_rule_from({{512, 100, 1, 0, "not faster", "dealing failed", 0,
                                     std::nullopt, std::nullopt, std::nullopt}})
                .devices_from,
            0);
  EXPECT_EQ(tuner::batch_rule_from({}).devices_from, 0);
  const prof::BatchRule r =
      rule({{512, "faster"}, {256, "faster"}, {128, "faster"}, {64, "not faster"}});
  EXPECT_EQ(r.devices_from, 91);
  ASSERT_EQ(r.points.size(), 4u);
  EXPECT_EQ(r.points.front().size, 64);
  EXPECT_EQ(r.points.back().size, 512);
}

// Where the rounds chose a side, the edge follows the sides: the devices alone count as the
// devices paying as dealing does, and the cores stop the walk; a point that ran only the devices
// alone (dealing failed) still counts as the devices having run.
TEST(BatchRule, TheEdgeFollowsTheSidesWhereTheRoundsChoseOne) {
  using Side = prof::BatchSide;
  const auto point = [](int64_t size, Side side, double gpu = 3, double hybrid = 2) {
    return prof::BatchPoint{size, 100, 1,    hybrid,       "faster",
                            "",   gpu, side, std::nullopt, std::nullopt};
  };
  EXPECT_EQ(tuner::batch_rule_from(
                {point(512, Side::Devices), point(256, Side::Dealt), point(128, Side::Cores)})
                .devices_from,
            181);
  EXPECT_EQ(
      tuner::batch_rule_from({point(512, Side::Devices), point(256, Side::Devices)}).devices_from,
      256);
  EXPECT_EQ(tuner::batch_rule_from({point(512, Side::Cores, 3, 0)}).devices_from, 724)
      << "the devices alone ran at the largest size though dealing failed there";
  EXPECT_EQ(tuner::batch_rule_from({point(512, Side::Cores, 0, 0)}).devices_from, 0);
  // A verdict of "faster" no longer means dealt where a side was chosen.
  EXPECT_EQ(point(512, Side::Cores).side(), Side::Cores);
  EXPECT_EQ(
      prof::BatchPoint({512, 100, 1, 2, "faster", "", 0, std::nullopt, std::nullopt, std::nullopt})
          .side(),
      Side::Dealt)
      << "a profile from before the devices-alone side: dealt where dealing was faster";
}

// The batch phase alone, on PoCL played as a discrete device with every tandem_malloc block
// pinned, so that both memories are measured: from the largest size down until dealing stops
// paying, each point a checked batch sized by the cores' rate; the profile keeps the rule its
// points give, for each memory; a second run takes every measurement from the log.
TEST_F(ProfileDir, BatchOnlyMeasuresWhereDealingPays) {
  // A dgemm tune came first: the local profile holds d alone. The batch phase of s rests on the
  // built-in entry's s section (its kernels, not an empty section), and the file it saves holds
  // d as it was and s, nothing it did not tune.
  const auto entry = prof::active(here());
  ASSERT_TRUE(entry && entry->precisions.count(detail::Precision::s) &&
              entry->precisions.count(detail::Precision::d));
  const prof::PrecisionProfile& entry_s = entry->precisions.at(detail::Precision::s);
  prof::Profile d_only;
  d_only.tandem_version = TANDEM_VERSION;
  d_only.identity = here();
  d_only.precisions[detail::Precision::d] = entry->precisions.at(detail::Precision::d);
  d_only.precisions[detail::Precision::d].gpu_gflops = 1234.5;
  prof::save(d_only, prof::path_for(here()));
  prof::forget();
  std::optional<detail::seams::Override> seams(std::in_place,
                                               test::discrete(false, /*pin_every_block=*/true));
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.batch_only = true;
  o.batch_sizes = {32, 64};
  o.batch_call_seconds = 0.01;
  o.batch_kernel_evaluations = 0;  // CoalescedSearchKeepsOnlyWhatBeatsTheDirectKernel searches it
  o.log = dir_ / "tune.jsonl";
  const auto report = tuner::tune(o);
  const prof::Profile p = prof::load(report.saved);
  const auto& pp = p.precisions.at(detail::Precision::s);
  EXPECT_EQ(p.precisions.size(), 2u) << "s and d only";
  EXPECT_EQ(p.precisions.at(detail::Precision::d).gpu_gflops, 1234.5) << "d as the file had it";
  EXPECT_EQ(pp.gpu_kernel, entry_s.gpu_kernel) << "s from the built-in entry";
  ASSERT_FALSE(entry_s.source.empty());
  EXPECT_EQ(pp.based_on, entry_s.source) << "and the saved section says so";
  EXPECT_EQ(pp.measured, (std::vector<std::string>{"batch", "batch_resident"}))
      << "the rules measured here; the coalesced kernel was not searched";
  EXPECT_EQ(p.precisions.at(detail::Precision::d).based_on, "") << "d is the file's";
  EXPECT_EQ(p.tuning.strategy, "batch-only") << "the file had no record: the run's";
  EXPECT_EQ(pp.buckets.size(), entry_s.buckets.size());
  EXPECT_FALSE(pp.buckets.empty());
  ASSERT_TRUE(pp.batch.has_value());
  ASSERT_TRUE(pp.batch_resident.has_value()) << "a discrete device measures tandem_malloc memory";
  ASSERT_EQ(report.precisions.size(), 1u);
  const auto& summary = report.precisions[0];
  EXPECT_EQ(summary.batch_failure, "");
  int few_points = 0, middle_points = 0;
  for (const bool resident : {false, true}) {
    std::vector<prof::BatchPoint> measured;
    for (const auto& [r, point] : summary.batch_points)
      if (r == resident) measured.push_back(point);
    ASSERT_FALSE(measured.empty()) << resident;
    EXPECT_EQ(measured.front().size, 64) << "the largest size first";
    for (size_t i = 0; i < measured.size(); ++i) {
      EXPECT_GT(measured[i].count, 0);
      EXPECT_GT(measured[i].cpu_gflops, 0.0);
      EXPECT_GT(measured[i].hybrid_gflops, 0.0) << measured[i].note;
      EXPECT_GT(measured[i].gpu_gflops, 0.0) << measured[i].note;
      EXPECT_TRUE(measured[i].chosen.has_value()) << "a side chosen from the three";
      EXPECT_EQ(measured[i].note.find("failed"), std::string::npos) << measured[i].note;
      // Where the devices take such products, a batch of few of them was weighed too.
      if (measured[i].side() == prof::BatchSide::Cores) {
        EXPECT_FALSE(measured[i].few.has_value()) << "below the edge few stay on the cores";
      } else {
        ++few_points;
        ASSERT_TRUE(measured[i].few.has_value()) << measured[i].note;
        const prof::FewProducts& few = *measured[i].few;
        EXPECT_EQ(few.count, prof::batch_tune().kernel_few);
        EXPECT_GT(few.cpu_gflops, 0.0) << few.note;
        EXPECT_GT(few.gpu_gflops, 0.0) << few.note;
        EXPECT_EQ(few.devices, few.verdict == "faster") << few.note;
        EXPECT_NE(few.note.find(few.devices ? "the devices alone kept" : "the cores kept"),
                  std::string::npos)
            << few.note;
        // And dealing at a count between those and the point's, where there is one.
        const int64_t middle = prof::middle_count(prof::batch_tune().kernel_few, measured[i].count);
        ASSERT_EQ(measured[i].middle.has_value(), middle > 0) << measured[i].count;
        if (middle > 0) {
          ++middle_points;
          EXPECT_EQ(measured[i].middle->count, middle);
          EXPECT_GT(measured[i].middle->hybrid_gflops, 0.0) << measured[i].middle->note;
        }
      }
      if (i + 1 < measured.size()) {
        EXPECT_NE(measured[i].side(), prof::BatchSide::Cores) << "measured on past a loss";
      }
    }
    const prof::BatchRule& kept = resident ? *pp.batch_resident : *pp.batch;
    EXPECT_EQ(kept.devices_from, tuner::batch_rule_from(measured).devices_from) << resident;
    EXPECT_EQ(kept.points.size(), measured.size());
  }
  const auto batch_lines = [&] { return log_lines(o.log, "batch"); };
  const int before = batch_lines();
  EXPECT_EQ(before, static_cast<int>(summary.batch_points.size()));
  EXPECT_EQ(log_lines(o.log, "batch few"), few_points);
  EXPECT_EQ(log_lines(o.log, "batch middle"), middle_points);
  const auto again = tuner::tune(o);
  EXPECT_EQ(batch_lines(), before) << "every point resumed from the log";
  EXPECT_EQ(log_lines(o.log, "batch few"), few_points) << "and every point's few products";
  EXPECT_EQ(log_lines(o.log, "batch middle"), middle_points) << "and middle count";
  const auto back = prof::load(again.saved).precisions.at(detail::Precision::s);
  EXPECT_EQ(back.batch->devices_from, pp.batch->devices_from);
  EXPECT_EQ(back.batch_resident->devices_from, pp.batch_resident->devices_from);
  // The resumed points keep the notes the first run wrote (a point measured in two sets of rounds
  // says so in its note, which its logged rounds alone could not rebuild).
  ASSERT_EQ(back.batch->points.size(), pp.batch->points.size());
  for (size_t i = 0; i < pp.batch->points.size(); ++i) {
    EXPECT_EQ(back.batch->points[i].note, pp.batch->points[i].note);
    ASSERT_EQ(back.batch->points[i].few.has_value(), pp.batch->points[i].few.has_value());
    if (pp.batch->points[i].few) {
      EXPECT_EQ(back.batch->points[i].few->devices, pp.batch->points[i].few->devices);
      EXPECT_EQ(back.batch->points[i].few->note, pp.batch->points[i].few->note);
    }
  }
}

// A batch phase at s 64^3 alone, with a log a test writes records into: each names the kernel the
// tune gives a batch of its count (its coalesced bucket's in the profile in force, else its direct
// kernel), so that the tune resumes it.
class BatchLogDir : public ProfileDir {
 protected:
  void SetUp() override {
    ProfileDir::SetUp();
    o_ = tiny();
    o_.precisions = {detail::Precision::s};
    o_.batch_only = true;
    o_.batch_sizes = {64};
    o_.batch_kernel_evaluations = 0;
    o_.save = false;
    o_.log = dir_ / "tune.jsonl";
    entry_ = prof::active(here());
    ASSERT_TRUE(entry_ && entry_->precisions.count(detail::Precision::s));
    is_gpu_ = detail::gpu::info(*detail::gpu::open_device("")).is_gpu;
  }
  void record(const char* kind, int64_t count, std::vector<double> cpu, std::vector<double> gpu,
              std::vector<double> dealt, const std::string& verdict = "",
              const std::string& note = "") const {
    const prof::PrecisionProfile& pp = entry_->precisions.at(detail::Precision::s);
    prof::LogRecord r;
    r.kind = kind;
    r.verdict = verdict;
    r.note = note;
    r.precision = detail::Precision::s;
    r.size = 64;
    r.count = count;
    const auto* own = prof::coalesced_for(pp, is_gpu_, 64.0, count);
    r.kernel = own != nullptr ? *own : *prof::direct_for(&pp, is_gpu_).kernel;
    r.rounds = {{"cpu", std::move(cpu)}, {"gpu", std::move(gpu)}};
    if (!dealt.empty()) r.rounds["candidate"] = std::move(dealt);
    std::ofstream(o_.log, std::ios::app) << prof::to_log_line(r) << "\n";
  }
  tuner::TuneOptions o_;
  std::shared_ptr<const prof::Profile> entry_;
  bool is_gpu_ = false;
};

// Where a point's rounds gave the devices the batch, the phase weighs a batch of few of its
// products too (batch.kernel_few: auto never deals so few), the cores alone against the devices
// alone, and keeps the devices only where they beat the cores beyond the noise. Here the point's
// rounds come from a log that has the devices alone far ahead (PoCL's own rounds keep every size
// on the cores), so the few products are measured now; then a logged few-products record with the
// devices far ahead is resumed as it stands, measuring nothing.
TEST_F(BatchLogDir, ABatchPointTheDevicesTakeWeighsFewProductsToo) {
  const tuner::TuneOptions& o = o_;
  const std::vector<double> slow(5, 1.0), fast{0.01, 0.011, 0.012, 0.013, 0.014};
  record("batch", 200, slow, fast, std::vector<double>(5, 0.5));
  auto report = tuner::tune(o);
  auto point = report.profile.precisions.at(detail::Precision::s).batch->points.at(0);
  EXPECT_EQ(point.side(), prof::BatchSide::Devices) << point.note;
  ASSERT_TRUE(point.few.has_value());
  EXPECT_EQ(point.few->count, prof::batch_tune().kernel_few);
  EXPECT_GT(point.few->cpu_gflops, 0.0) << point.few->note;
  EXPECT_GT(point.few->gpu_gflops, 0.0) << point.few->note;
  // One set of rounds, or two where the first was too noisy with the devices ahead by medians:
  // each logged, the last with the verdict the profile holds.
  const int measured = log_lines(o.log, "batch few");
  EXPECT_GE(measured, 1) << "measured now, and logged";
  EXPECT_LE(measured, confirm_sets());
  EXPECT_EQ(log_lines(o.log, "batch"), 1) << "the point itself resumed";
  EXPECT_EQ(last_record(o.log, "batch few").verdict, point.few->verdict);
  EXPECT_EQ(last_record(o.log, "batch few").note, point.few->note);
  const auto resumed = [&](std::vector<double> cpu, std::vector<double> gpu,
                           int64_t count = prof::batch_tune().kernel_few,
                           const std::string& verdict = "", const std::string& note = "") {
    record("batch few", count, std::move(cpu), std::move(gpu), {}, verdict, note);
    const int before = log_lines(o.log, "batch few");
    const auto p = tuner::tune(o).profile.precisions.at(detail::Precision::s).batch->points.at(0);
    EXPECT_TRUE(p.few.has_value());
    return std::make_pair(p.few.value_or(prof::FewProducts{}),
                          log_lines(o.log, "batch few") - before);
  };
  auto [few, added] = resumed(slow, fast);
  EXPECT_TRUE(few.devices) << few.note;
  EXPECT_EQ(few.verdict, "faster");
  EXPECT_NE(few.note.find("ranges apart"), std::string::npos) << few.note;
  EXPECT_NE(few.note.find("the devices alone kept"), std::string::npos) << few.note;
  EXPECT_EQ(added, 0) << "the last record resumed, nothing measured";
  std::tie(few, added) = resumed(fast, slow);
  EXPECT_FALSE(few.devices) << few.note;
  EXPECT_NE(few.note.find("the cores kept"), std::string::npos) << few.note;
  // A logged set too noisy to decide (the devices ahead by medians, the ranges overlapping) is
  // the set that decided when it was logged: resumed as it stands, the cores kept, no new set.
  std::tie(few, added) = resumed({1.0, 1.0, 1.0, 1.0, 0.5}, {0.6, 0.6, 0.6, 0.6, 1.2});
  EXPECT_FALSE(few.devices) << few.note;
  EXPECT_EQ(few.verdict, "too noisy") << few.note;
  EXPECT_EQ(added, 0);
  // The last of two sets, logged with the note that tells them apart: where today's rule gives
  // its verdict again, the note is kept; where it does not, the note is today's.
  const std::string two_sets = "set 1: too noisy to decide; set 2: too noisy to decide";
  std::tie(few, added) = resumed({1.0, 1.0, 1.0, 1.0, 0.5}, {0.6, 0.6, 0.6, 0.6, 1.2},
                                 prof::batch_tune().kernel_few, "too noisy", two_sets);
  EXPECT_EQ(few.note, two_sets);
  EXPECT_EQ(added, 0);
  std::tie(few, added) =
      resumed(slow, fast, prof::batch_tune().kernel_few, "not faster", "an older rule's note");
  EXPECT_TRUE(few.devices) << few.note;
  EXPECT_EQ(few.note.find("an older rule's note"), std::string::npos) << few.note;
  EXPECT_NE(few.note.find("the devices alone kept"), std::string::npos) << few.note;
  EXPECT_EQ(added, 0);
  // A later record of another count (an older batch.kernel_few) is not these products': the last
  // record of their own count is resumed (the devices ahead), measuring nothing.
  std::tie(few, added) = resumed(fast, slow, prof::batch_tune().kernel_few + 1);
  EXPECT_EQ(few.count, prof::batch_tune().kernel_few);
  EXPECT_TRUE(few.devices) << few.note;
  EXPECT_EQ(added, 0) << few.note;
}

// Where a point's rounds gave the devices the batch, the phase deals a batch at its middle count
// too (prof::middle_count: 45 between ten products and the point's 200), the cores alone, the
// devices alone and the products dealt in the point's kind of rounds, judged as the point is.
// Here the point's rounds and its few products come from the log, so only the middle count is
// measured now; then a logged middle-count record is resumed as it stands, and a later one of
// another count is passed over for it.
TEST_F(BatchLogDir, ABatchPointTheDevicesTakeDealsAtItsMiddleCountToo) {
  const tuner::TuneOptions& o = o_;
  const std::vector<double> slow(5, 1.0), fast{0.01, 0.011, 0.012, 0.013, 0.014};
  record("batch", 200, slow, fast, std::vector<double>(5, 0.5));
  record("batch few", prof::batch_tune().kernel_few, slow, fast, {});
  const int64_t middle = prof::middle_count(prof::batch_tune().kernel_few, 200);
  ASSERT_EQ(middle, std::max<int64_t>(45, prof::batch_deal_from_count()));
  const auto point = [&] {
    return tuner::tune(o).profile.precisions.at(detail::Precision::s).batch->points.at(0);
  };
  prof::BatchPoint p = point();
  EXPECT_EQ(p.side(), prof::BatchSide::Devices) << p.note;
  ASSERT_TRUE(p.middle.has_value()) << "measured now";
  EXPECT_EQ(p.middle->count, middle);
  EXPECT_GT(p.middle->cpu_gflops, 0.0) << p.middle->note;
  EXPECT_GT(p.middle->gpu_gflops, 0.0) << p.middle->note;
  EXPECT_GT(p.middle->hybrid_gflops, 0.0) << p.middle->note;
  EXPECT_EQ(p.middle->note.find("failed"), std::string::npos) << p.middle->note;
  const int measured = log_lines(o.log, "batch middle");
  EXPECT_GE(measured, 1) << "logged";
  EXPECT_LE(measured, confirm_sets());
  EXPECT_EQ(last_record(o.log, "batch middle").count, middle);
  EXPECT_EQ(last_record(o.log, "batch middle").verdict, p.middle->verdict);
  EXPECT_EQ(last_record(o.log, "batch middle").note, p.middle->note);
  EXPECT_EQ(log_lines(o.log, "batch"), 1) << "the point resumed";
  EXPECT_EQ(log_lines(o.log, "batch few"), 1) << "its few products resumed";
  // Dealing far ahead at the middle count, logged: resumed as it stands, measuring nothing.
  record("batch middle", middle, slow, std::vector<double>(5, 0.5), fast);
  p = point();
  ASSERT_TRUE(p.middle.has_value());
  EXPECT_EQ(p.middle->side, prof::BatchSide::Dealt) << p.middle->note;
  EXPECT_EQ(p.middle->verdict, "faster");
  EXPECT_NEAR(p.middle->hybrid_gflops,
              2.0 * 64 * 64 * 64 * static_cast<double>(middle) / 0.012 * 1e-9, 1e-6);
  EXPECT_EQ(log_lines(o.log, "batch middle"), measured + 1) << "the record written here only";
  // The devices alone far ahead instead: the side follows the logged rounds.
  record("batch middle", middle, slow, fast, std::vector<double>(5, 0.5));
  EXPECT_EQ(point().middle->side, prof::BatchSide::Devices);
  EXPECT_EQ(log_lines(o.log, "batch middle"), measured + 2);
  // A later record of another count (another point count, or another rule for the middle) is not
  // this middle count's: the last record of its own count is resumed, measuring nothing.
  record("batch middle", middle + 1, slow, std::vector<double>(5, 0.5), fast);
  p = point();
  EXPECT_EQ(p.middle->side, prof::BatchSide::Devices) << "the devices-ahead record of its count";
  EXPECT_EQ(log_lines(o.log, "batch middle"), measured + 3) << "the records written here only";
}

// A device whose dealt batches come back wrong is never given products: the cheap check fails the
// dealt side at the largest size, the measuring ends there, and the rule keeps every product on
// the cores (0: never, not the edge above the largest size a dealing that ran but lost gets).
// Only calls where a device took part are tampered with (dealt, and the devices alone): the cores'
// pass. Sizes below the smallest a rule deals from are refused.
TEST_F(ProfileDir, AWrongDealtBatchIsNeverKept) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.batch_only = true;
  o.batch_sizes = {32, 64};
  o.batch_call_seconds = 0.005;
  o.batch_kernel_evaluations = 1;  // the direct kernel alone: every call of it is tampered with
  o.save = false;
  int tampered = 0;
  o.tamper = [&tampered](void* c, int64_t n, detail::Precision precision, bool) {
    if (precision == detail::Precision::s && n > 0) {
      static_cast<float*>(c)[0] += 1.0f;  // product 0's corner, which the cheap check reads
      ++tampered;
    }
  };
  const auto report = tuner::tune(o);
  EXPECT_GT(tampered, 0) << "no batch was dealt";
  const auto& pp = report.profile.precisions.at(detail::Precision::s);
  ASSERT_TRUE(pp.batch.has_value());
  EXPECT_EQ(pp.batch->devices_from, 0);
  ASSERT_EQ(pp.batch->points.size(), 1u);
  EXPECT_EQ(pp.batch->points[0].size, 64);
  EXPECT_EQ(pp.batch->points[0].verdict, "not faster");
  EXPECT_EQ(pp.batch->points[0].hybrid_gflops, 0.0) << "the dealt side kept no times";
  EXPECT_EQ(pp.batch->points[0].gpu_gflops, 0.0) << "nor the devices alone";
  EXPECT_EQ(pp.batch->points[0].side(), prof::BatchSide::Cores);
  EXPECT_NE(pp.batch->points[0].note.find("cheap check"), std::string::npos)
      << pp.batch->points[0].note;
  EXPECT_GT(pp.batch->points[0].cpu_gflops, 0.0);
  EXPECT_TRUE(pp.coalesced.empty()) << "no wrong candidate becomes a bucket";
  EXPECT_NE(report.precisions[0].batch_failure.find("coalesced kernel at"), std::string::npos)
      << report.precisions[0].batch_failure;
  o.batch_sizes = {16, 64};
  EXPECT_THROW(tuner::tune(o), std::invalid_argument);
}

// The coalesced kernel's search, alone of the batch phase's time on PoCL: a bucket per size and
// count (batch.kernel_few and the rule's count), each from the direct kernel, every candidate a
// checked batch call logged with its count; the bucket keeps the search's best only where the
// rounds found it faster, else the direct kernel; the rule then deals with each size's bucket; a
// rerun measures nothing again.
TEST_F(ProfileDir, CoalescedSearchKeepsOnlyWhatBeatsTheDirectKernel) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.batch_only = true;
  o.batch_sizes = {48};
  o.batch_call_seconds = 0.01;
  o.batch_kernel_evaluations = 3;
  o.log = dir_ / "tune.jsonl";
  const auto report = tuner::tune(o);
  const auto pp = prof::load(report.saved).precisions.at(detail::Precision::s);
  ASSERT_EQ(report.precisions.size(), 1u);
  const auto& summary = report.precisions[0];
  ASSERT_FALSE(pp.coalesced.empty()) << summary.batch_failure;
  const int64_t few = prof::batch_tune().kernel_few;
  EXPECT_EQ(pp.coalesced.front().count, few) << "the few products' bucket first";
  ASSERT_TRUE(pp.batch.has_value());
  ASSERT_EQ(pp.batch->points.size(), 1u);
  const int64_t many = pp.batch->points[0].count;
  EXPECT_EQ(pp.coalesced.size(), many > few ? 2u : 1u);
  // The first candidate of each bucket is where the search starts: the direct kernel.
  std::map<int64_t, std::map<std::string, int>> start;
  std::ifstream in(o.log);
  int candidates = 0;
  for (std::string line; std::getline(in, line);) {
    const auto r = prof::from_log_line(line);
    ASSERT_TRUE(r.has_value()) << line;
    if (r->kind != "coalesced") continue;
    ++candidates;
    EXPECT_EQ(r->size, 48);
    EXPECT_TRUE(r->count == few || r->count == many) << r->count;
    EXPECT_TRUE(r->seconds.has_value()) << r->failure;
    start.emplace(r->count, r->kernel);
  }
  EXPECT_EQ(candidates, summary.coalesced_evaluations);
  EXPECT_LE(candidates, 3 * static_cast<int>(pp.coalesced.size()));
  const bool is_gpu = detail::gpu::info(*detail::gpu::open_devices("").front()).is_gpu;
  for (const prof::CoalescedBucket& b : pp.coalesced) {
    EXPECT_EQ(b.size, 48);
    EXPECT_EQ(b.direct_kernel, *prof::direct_for(&pp, is_gpu).kernel)
        << "timed against the direct kernel a batch would otherwise run";
    EXPECT_EQ(b.resident, std::optional<bool>(false)) << "PoCL: ordinary memory, not discrete";
    EXPECT_EQ(b.kernel.at("KERNEL"), detail::gpu::kDirect);
    EXPECT_GT(b.gflops, 0.0) << b.note;
    EXPECT_GT(b.direct_gflops, 0.0) << b.note;
    ASSERT_EQ(start.count(b.count), 1u);
    if (b.verdict == "faster") {
      EXPECT_NE(b.kernel, start.at(b.count)) << b.note;
    } else {
      EXPECT_EQ(b.kernel, start.at(b.count)) << b.note;
    }
  }
  // The rule dealt with the bucket of its size and count: its own kernel where it won, else the
  // direct kernel (where the bucket's search started).
  const auto* own = prof::coalesced_for(pp, is_gpu, 48, many);
  const std::map<std::string, int> dealt = own != nullptr ? *own : start.at(many);
  std::ifstream again_in(o.log);
  int rule_records = 0;
  for (std::string line; std::getline(again_in, line);)
    if (const auto r = prof::from_log_line(line); r && r->kind == "batch") {
      ++rule_records;
      EXPECT_EQ(r->kernel, dealt);
    }
  EXPECT_GE(rule_records, 1);
  const int before = log_lines(o.log, "coalesced");
  const auto again = tuner::tune(o);
  EXPECT_EQ(log_lines(o.log, "coalesced"), before) << "every candidate resumed from the log";
  const auto back = prof::load(again.saved).precisions.at(detail::Precision::s);
  ASSERT_EQ(back.coalesced.size(), pp.coalesced.size());
  for (size_t i = 0; i < back.coalesced.size(); ++i)
    EXPECT_EQ(back.coalesced[i].kernel, pp.coalesced[i].kernel);
}

// The check a coalesced bucket's winner must pass: an awkward batch (300 x 270 x 70, alpha 0.75,
// A transposed, then B) from random inputs on the device, each product against the CPU in double;
// one wrong element fails it, named.
TEST(CoalescedCheck, AWrongElementOfTheBatchFailsIt) {
  Options gpu;
  gpu.strategy = Strategy::Gpu;
  EXPECT_EQ(tuner::batch_full_check<float>(gpu, 3), "");
  EXPECT_EQ(tuner::batch_full_check<double>(gpu, 4), "");
  const auto wrong = [](void* c, int64_t n, detail::Precision, bool) {
    static_cast<float*>(c)[n - 1] += 1e-3f;  // the last product's last element
  };
  const std::string bad = tuner::batch_full_check<float>(gpu, 3, wrong);
  EXPECT_NE(bad.find("batch check (A transposed): product 2 C(299,269)"), std::string::npos) << bad;
}

// --objective energy reads power: on a fake amdgpu sensor at a constant 20 W the run goes through
// and records its objective; with nothing readable it is refused with the reason.
TEST_F(ProfileDir, EnergyObjective) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.save = false;
  o.objective = "energy";
  o.energy_seconds = 0.05;
  o.power_config.powercap_root = (dir_ / "none").string();
  o.power_config.hwmon_root = (dir_ / "hwmon").string();
  o.power_config.nvml_library = "libnvidia-ml-absent-for-tests.so.1";
  try {
    tuner::tune(o);
    FAIL() << "tuned for energy with no power source";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs a readable power source"), std::string::npos)
        << e.what();
  }
  fs::create_directories(dir_ / "hwmon" / "hwmon0");
  std::ofstream(dir_ / "hwmon" / "hwmon0" / "name") << "amdgpu\n";
  std::ofstream(dir_ / "hwmon" / "hwmon0" / "power1_input") << "20000000\n";
  const auto report = tuner::tune(o);
  EXPECT_EQ(report.profile.tuning.objective, "energy");
  EXPECT_GE(report.precisions[0].evaluations, 2);
  EXPECT_EQ(report.precisions[0].failures, 0);
  EXPECT_FALSE(report.profile.precisions.at(detail::Precision::s).gpu_kernel.empty());
  o.objective = "speed";
  EXPECT_THROW(tuner::tune(o), std::invalid_argument);
}

// tandem compare and the benchmarks: without --resident the operands are in ordinary memory,
// which a discrete device packs and copies; with it, in tandem_malloc memory, which it copies
// straight (pinned).
TEST(Measure, OrdinaryMemoryIsPackedAndTandemMemoryIsPinnedOnADiscreteDevice) {
  detail::seams::Override seams(test::discrete(false, /*pin_every_block=*/true));
  bench::Problem<float> plain(70, 50, 30, 1, /*resident=*/false),
      resident(70, 50, 30, 2, /*resident=*/true);
  Options o;
  o.strategy = Strategy::Gpu;
  Report rp, rr;
  plain.run(o, &rp);
  resident.run(o, &rr);
  for (auto b : {rp.a, rp.b, rp.c}) EXPECT_EQ(b, Report::Buffer::Copy);
  for (auto b : {rr.a, rr.b, rr.c}) EXPECT_EQ(b, Report::Buffer::Pinned);
  EXPECT_LT(plain.max_relative_error(plain.reference()), 1e-5);
  EXPECT_LT(resident.max_relative_error(resident.reference()), 1e-5);
}

prof::Profile sample(const prof::Identity& id) {
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.identity = id;
  prof::PrecisionProfile pp;
  pp.gpu_kernel = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8}};
  pp.gpu_size = 512;
  pp.gpu_gflops = 12.5;
  prof::Bucket small;
  small.size = 256;
  small.parts = 64;
  small.gpu_parts = 0;
  prof::Bucket big = small;
  big.size = 2048;
  big.gpu_parts = 48;
  big.cpu_threads = 3;
  big.kernel = {{"MWG", 64}, {"NWG", 64}, {"MDIMC", 16}, {"NDIMC", 16}};
  prof::Bucket huge = big;
  huge.size = 8192;
  huge.gpu_kernel = {{"MWG", 128}, {"NWG", 64}, {"MDIMC", 16}, {"NDIMC", 16}};
  prof::ResidentSplit resident;
  resident.gpu_parts = 60;
  resident.cpu_threads = 7;
  resident.kernel = {{"MWG", 32}, {"NWG", 64}, {"MDIMC", 8}, {"NDIMC", 16}};
  resident.best_gflops = 450;
  resident.dynamic = true;
  huge.resident = resident;
  big.cpu_gflops = 100;
  big.gpu_gflops = 300;
  big.best_gflops = 390;
  pp.buckets = {small, big, huge};
  pp.direct_kernel = {{"KERNEL", 2}, {"MWG", 16}, {"NWG", 32}, {"VWA", 2}};
  pp.direct_size = 512;
  pp.direct_gflops = 7.5;
  pp.direct_below = 700;
  p.precisions[detail::Precision::s] = pp;
  p.tuning.strategy = "annealing";
  p.tuning.evaluations = 42;
  return p;
}

TEST_F(ProfileDir, RoundTrip) {
  const prof::Profile p = sample(here());
  const prof::Profile q = prof::from_json(prof::to_json(p));
  EXPECT_EQ(prof::to_json(q), prof::to_json(p));
  EXPECT_EQ(q.identity, p.identity);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).buckets.at(1).kernel.at("MWG"), 64);
  EXPECT_TRUE(q.precisions.at(detail::Precision::s).buckets.at(1).gpu_kernel.empty());
  EXPECT_EQ(q.precisions.at(detail::Precision::s).buckets.at(2).gpu_kernel.at("MWG"), 128);
  EXPECT_FALSE(q.precisions.at(detail::Precision::s).buckets.at(1).resident.has_value());
  ASSERT_TRUE(q.precisions.at(detail::Precision::s).buckets.at(2).resident.has_value());
  EXPECT_EQ(q.precisions.at(detail::Precision::s).buckets.at(2).resident->cpu_threads, 7);
  EXPECT_TRUE(q.precisions.at(detail::Precision::s).buckets.at(2).resident->dynamic);
  EXPECT_FALSE(q.precisions.at(detail::Precision::s).buckets.at(2).dynamic);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).direct_kernel,
            p.precisions.at(detail::Precision::s).direct_kernel);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).direct_below, 700);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).direct_size, 512);
  std::string bad = prof::to_json(p);
  bad.replace(bad.find("\"dynamic\""), 9, "\"greedy\"");
  EXPECT_THROW(prof::from_json(bad), std::runtime_error) << "an unknown balance is refused";
  prof::save(p, prof::path_for(here()));
  auto active = prof::active(here());
  ASSERT_TRUE(active);
  EXPECT_EQ(active->origin.rfind(prof::path_for(here()).string(), 0), 0u) << active->origin;
  EXPECT_EQ(active->tuning.evaluations, 42);
}

// A local profile speaks for the precisions it holds; each other precision keeps the built-in
// entry's section (tuning dgemm alone must not put sgemm back on the defaults, nor leave a later
// batch-only tune of sgemm without its direct kernel), and the origin names where each came from.
TEST_F(ProfileDir, ALocalProfileKeepsTheBuiltInEntryForThePrecisionsItLacks) {
  prof::forget();
  const auto entry = prof::active(here());
  ASSERT_TRUE(entry);
  ASSERT_EQ(entry->origin.rfind("built-in:", 0), 0u) << "an empty profile directory";
  ASSERT_TRUE(prof::own(here()));
  EXPECT_EQ(prof::own(here())->origin, entry->origin) << "nothing tuned here: the entry";
  ASSERT_TRUE(entry->precisions.count(detail::Precision::d)) << "the test needs an entry with d";
  prof::Profile p = sample(here());  // s alone
  ASSERT_EQ(p.precisions.size(), 1u);
  prof::save(p, prof::path_for(here()));
  prof::forget();
  const auto active = prof::active(here());
  ASSERT_TRUE(active);
  EXPECT_EQ(active->precisions.at(detail::Precision::s).direct_below, 700) << "the local s";
  for (const auto& [prec, pp] : entry->precisions) {
    if (prec == detail::Precision::s) continue;
    ASSERT_TRUE(active->precisions.count(prec)) << detail::letter(prec) << " was lost";
    const prof::PrecisionProfile& kept = active->precisions.at(prec);
    EXPECT_EQ(kept.gpu_kernel, pp.gpu_kernel) << detail::letter(prec);
    EXPECT_EQ(kept.gpu_gflops, pp.gpu_gflops) << detail::letter(prec);
    EXPECT_EQ(kept.buckets.size(), pp.buckets.size()) << detail::letter(prec);
    EXPECT_EQ(kept.direct_kernel, pp.direct_kernel) << detail::letter(prec);
  }
  EXPECT_NE(active->origin.find("d, "), std::string::npos) << active->origin;
  EXPECT_NE(active->origin.find(" from " + entry->origin + ")"), std::string::npos)
      << active->origin;
  // What this machine tuned, as `tandem profile export` writes it: the local sections alone.
  const auto mine = prof::own(here());
  ASSERT_TRUE(mine);
  EXPECT_EQ(mine->precisions.size(), 1u);
  EXPECT_EQ(mine->origin, prof::path_for(here()).string());
  // A local profile with every precision the entry has is the local profile alone.
  for (const auto& [prec, pp] : entry->precisions) p.precisions.emplace(prec, pp);
  p.precisions[detail::Precision::d].gpu_gflops = 1234.5;
  prof::save(p, prof::path_for(here()));
  prof::forget();
  const auto whole = prof::active(here());
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->origin, prof::path_for(here()).string());
  EXPECT_EQ(whole->precisions.at(detail::Precision::d).gpu_gflops, 1234.5);
}

TEST_F(ProfileDir, RoundTripOfTheCorners) {
  prof::Profile p = sample(here());
  p.precisions.clear();  // a device without fp64 tuned for dgemm only keeps nothing
  p.match = "platform";
  const prof::Profile q = prof::from_json(prof::to_json(p));
  EXPECT_TRUE(q.precisions.empty());
  EXPECT_EQ(q.match, "platform");
  prof::LogRecord r;
  r.kind = "split";
  r.precision = detail::Precision::d;
  r.size = 512;
  r.point = {1, 2, 3};
  r.kernel = {{"MWG", 32}};
  r.gpu_parts = 20;
  r.parts = 64;
  r.cpu_threads = 3;
  r.seconds = 0.25;
  r.spread = 0.1;
  r.bimodal = true;
  r.dynamic = true;
  const auto back = prof::from_log_line(prof::to_log_line(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->kind, "split");
  EXPECT_EQ(back->precision, detail::Precision::d);
  EXPECT_EQ(back->point, r.point);
  EXPECT_EQ(back->kernel, r.kernel);
  EXPECT_EQ(back->gpu_parts, 20);
  EXPECT_EQ(back->cpu_threads, 3);
  EXPECT_EQ(back->seconds, 0.25);
  EXPECT_TRUE(back->bimodal);
  EXPECT_TRUE(back->dynamic);
  r.seconds.reset();
  r.failure = "build failed";
  EXPECT_FALSE(prof::from_log_line(prof::to_log_line(r))->seconds.has_value());
}

// On a discrete device (played here by PoCL through the seam assume_discrete) the split is searched
// on tandem_malloc memory too, and the log says which runs were.
// The start kernel reads A transposed (A_T = 1), which makes every NoTrans call transpose A on
// the device first, in a launch of its own that phase 1's kernel-alone ranking does not count.
// So the GPU alone is measured once more reading both operands as stored (A_T = B_T = -1), and a
// bucket keeps whichever whole call was faster: its GPU-only kernel is the cheapest GPU-alone
// record of its size and memory.
TEST_F(ProfileDir, DiscreteDevicesTuneASplitForTandemMemory) {
  std::optional<detail::seams::Override> seams(std::in_place,
                                               test::discrete(false, /*pin_every_block=*/true));
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.budget_evaluations = 1;  // the start point alone: top is that kernel
  o.model = false;
  o.start = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8},   {"KWG", 16},   {"KUNROLL", 4},
             {"VW", 2},   {"SA", 1},   {"SB", 1},    {"STRIDED", 1}, {"KERNEL", 1}, {"VWM", 2},
             {"VWN", 2},  {"DB", 0},   {"AK", 0},    {"A_T", 1},     {"B_T", 0}};
  const auto report = tuner::tune(o);
  seams.reset();
  std::ifstream log(report.log);
  int resident = 0, ordinary = 0, kernels = 0, pipelines = 0;
  // GPU-alone records by size and memory: how many read as stored, and the cheapest kernel.
  std::map<std::pair<int64_t, bool>, int> stored;
  std::map<std::pair<int64_t, bool>, std::pair<double, std::map<std::string, int>>> cheapest;
  for (std::string line; std::getline(log, line);) {
    const auto r = prof::from_log_line(line);
    ASSERT_TRUE(r.has_value()) << line;
    if (r->kind == "split") ++(r->resident ? resident : ordinary);
    // Kernels are ranked as one launch; GPU-alone runs try the pipeline's settings.
    if (r->kind == "kernel") {
      ++kernels;
      EXPECT_EQ(r->kernel.count("CHUNK_FILL") ? r->kernel.at("CHUNK_FILL") : 0, 64) << line;
      EXPECT_EQ(r->kernel.at("A_T"), 1) << line;
    }
    if (r->kind == "split" && r->gpu_parts == r->parts) {
      EXPECT_TRUE(r->kernel.count("CHUNK_FILL") && r->kernel.count("QUEUES")) << line;
      ++pipelines;
      const int a_t = r->kernel.at("A_T"), b_t = r->kernel.at("B_T");
      EXPECT_TRUE(a_t == 1 || (a_t == -1 && b_t == -1)) << line;
      const std::pair<int64_t, bool> at{r->size, r->resident};
      if (a_t == -1) ++stored[at];
      if (!r->seconds) continue;
      auto [it, fresh] = cheapest.try_emplace(at, r->cost, r->kernel);
      if (!fresh && r->cost < it->second.first) it->second = {r->cost, r->kernel};
    }
  }
  EXPECT_GT(resident, 0);
  EXPECT_GT(ordinary, 0);
  EXPECT_GT(kernels, 0);
  EXPECT_GE(pipelines, 7) << "each kernel alone with every pipeline setting";
  for (const auto& b : report.profile.precisions.at(detail::Precision::s).buckets) {
    SCOPED_TRACE(b.size);
    for (const bool on_tandem_memory : {false, true})
      EXPECT_EQ((stored[{b.size, on_tandem_memory}]), 1)
          << "as stored once, at the chunking the kernel ran fastest with";
    if (!b.gpu_kernel.empty()) {
      EXPECT_TRUE(b.gpu_kernel.count("QUEUES")) << "the GPU-only kernel keeps its chunking";
      EXPECT_EQ(b.gpu_kernel, (cheapest[{b.size, false}].second));
    }
    if (b.resident) {
      // Stored whatever it is, the CPU alone included, so that calls on such memory never run
      // the ordinary memory's split, which was not measured for them.
      EXPECT_LE(b.resident->gpu_parts, b.parts);
      EXPECT_EQ(b.resident->kernel.empty(), b.resident->gpu_parts == 0);
      if (b.resident->gpu_parts == b.parts) {
        EXPECT_EQ(b.resident->kernel, (cheapest[{b.size, true}].second));
      }
    }
  }
}

// On a discrete device auto keeps the GPU alone where B outweighs A and C together: every
// share copies all of B, so a row split saves little and costs the CPU share. Hybrid does not.
TEST_F(ProfileDir, AutoKeepsTheGpuAloneWhereBDominatesOnADiscreteDevice) {
  prof::Profile p = sample(here());
  auto bucket = p.precisions.at(detail::Precision::s).buckets.at(2);
  bucket.size = 256;
  bucket.gpu_parts = 40;
  bucket.cpu_threads = 1;
  bucket.resident.reset();
  p.precisions.at(detail::Precision::s).buckets = {bucket};
  prof::save(p, prof::path_for(here()));
  std::optional<detail::seams::Override> seams(std::in_place, test::discrete());
  const auto run = [](int64_t m, int64_t n, int64_t k, Options o = {}) {
    std::vector<float> a(m * k, 1.0f), b(k * n, 1.0f), c(m * n, 0.0f);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n,
                0.0f, c.data(), n, o, &r);
    for (float x : c) EXPECT_EQ(x, float(k));
    return r;
  };
  Options hybrid;
  hybrid.strategy = Strategy::Hybrid;
  const Report square = run(256, 256, 256), thin = run(32, 512, 1024), tall = run(1024, 512, 32),
               thin_hybrid = run(32, 512, 1024, hybrid);
  seams.reset();
  EXPECT_DOUBLE_EQ(square.gpu_fraction, 40.0 / 64.0);
  EXPECT_EQ(thin.profile_bucket, 256);
  EXPECT_DOUBLE_EQ(thin.gpu_fraction, 1.0) << "32 rows over K = 1024: B is most of the copying";
  EXPECT_EQ(thin.cpu_rows, 0);
  EXPECT_EQ(tall.profile_bucket, 256);
  EXPECT_DOUBLE_EQ(tall.gpu_fraction, 40.0 / 64.0) << "B is small: the split stands";
  EXPECT_DOUBLE_EQ(thin_hybrid.gpu_fraction, 40.0 / 64.0)
      << "hybrid takes the profile's fraction as it is";
}

// On a discrete device auto weighs what feeding it costs from the caller's ordinary memory (a
// fixed cost per call and a rate per byte) against the CPU doing the whole call at the bucket's
// rate; from pinned memory it weighs the bus alone. The feed is measured on the device once
// (here by real calls on PoCL), or set through the seam.
TEST_F(ProfileDir, AutoWeighsTheFeedFromOrdinaryMemoryOnADiscreteDevice) {
  prof::Profile p = sample(here());
  auto bucket = p.precisions.at(detail::Precision::s).buckets.at(1);
  bucket.size = 256;
  bucket.gpu_parts = 64;  // the GPU alone
  bucket.cpu_gflops = 10;
  bucket.gpu_gflops = 1e6;
  p.precisions.at(detail::Precision::s).buckets = {bucket};
  prof::save(p, prof::path_for(here()));
  const int64_t n = 256;
  const auto run = [n](bool pinned) {
    std::vector<float, Allocator<float>> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
    std::vector<float> a_plain(n * n, 1.0f), b_plain(n * n, 1.0f), c_plain(n * n, 0.0f);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f,
                pinned ? a.data() : a_plain.data(), n, pinned ? b.data() : b_plain.data(), n, 0.0f,
                pinned ? c.data() : c_plain.data(), n, {}, &r);
    for (float x : pinned ? std::vector<float>(c.begin(), c.end()) : c_plain)
      EXPECT_EQ(x, float(n));
    return r;
  };
  // 34 MFLOP take the CPU 3.4 ms at 10 GFLOPS.
  auto with_feed = [&](double seconds, double rate, bool pinned) {
    detail::seams::Values v = test::discrete(false, /*pin_every_block=*/true);
    v.feed_seconds = seconds;
    v.feed_rate = rate;
    detail::seams::Override seams(v);
    return run(pinned);
  };
  const Report slow = with_feed(0.01, 1e12, false), fast = with_feed(0, 1e12, false),
               by_bytes = with_feed(0, 1e8, false), pinned = with_feed(0.01, 1e8, true);
  EXPECT_EQ(slow.gpu_rows, 0) << "10 ms a call against 3.4 ms on the CPU";
  EXPECT_EQ(slow.strategy, Strategy::Cpu);
  EXPECT_EQ(fast.gpu_rows, n);
  EXPECT_EQ(by_bytes.gpu_rows, 0) << "786 kB at 100 MB/s: 7.9 ms";
  EXPECT_EQ(pinned.gpu_rows, n) << "pinned operands: the bus's rate, not the feed's";
  EXPECT_EQ(pinned.c, Report::Buffer::Pinned);

  // Measured: once per device and precision, by real calls.
  detail::seams::Override seams(test::discrete());
  auto device = detail::gpu::open_devices("").front();
  const detail::FeedCost measured = detail::ordinary_feed<float>(device);
  ASSERT_TRUE(measured.known());
  EXPECT_GT(measured.pipelined_bytes_per_second, 0.0) << "16 MiB and more: several chunks";
  EXPECT_GT(measured.kernel_gflops, 0.0);
  const detail::FeedCost again = detail::ordinary_feed<float>(device);
  EXPECT_EQ(again.seconds, measured.seconds);
  EXPECT_EQ(again.bytes_per_second, measured.bytes_per_second);
  EXPECT_TRUE(detail::ordinary_feed<double>(device).known() || !detail::gpu::info(*device).fp64);
}

// auto takes the resident split only when A, B and C are all in the device's pinned memory.
TEST_F(ProfileDir, AutoUsesTheResidentSplitForTandemMemory) {
  prof::Profile p = sample(here());
  auto& huge = p.precisions.at(detail::Precision::s).buckets.at(2);
  huge.size = 256;  // the nearest bucket for the calls below
  huge.gpu_parts = 16;
  huge.resident->gpu_parts = 48;
  huge.resident->kernel = {};  // the bucket's kernel
  huge.resident->cpu_threads = 1;
  p.precisions.at(detail::Precision::s).buckets = {huge};
  prof::save(p, prof::path_for(here()));
  detail::seams::Override seams(test::discrete(false, /*pin_every_block=*/true));
  const int64_t n = 256;
  std::vector<float, Allocator<float>> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  std::vector<float> c_plain(n * n, 0.0f);
  Report pinned, plain;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n, {}, &pinned);
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c_plain.data(), n, {}, &plain);  // C in ordinary memory
  for (float x : c) ASSERT_EQ(x, float(n));
  for (float x : c_plain) ASSERT_EQ(x, float(n));
  EXPECT_TRUE(pinned.profile_resident);
  EXPECT_DOUBLE_EQ(pinned.gpu_fraction, 48.0 / 64.0);
  EXPECT_EQ(pinned.c, Report::Buffer::Pinned);
  EXPECT_EQ(pinned.cpu_threads, 1);
  EXPECT_FALSE(plain.profile_resident);
  EXPECT_DOUBLE_EQ(plain.gpu_fraction, 16.0 / 64.0);
}

// A bucket whose split ran faster under dynamic balance gives auto dynamic balance there; the
// options and TANDEM_BALANCE still win, and the bucket's static neighbours stay static.
TEST_F(ProfileDir, AutoFollowsTheBucketsBalance) {
  prof::Profile p = sample(here());
  auto& big = p.precisions.at(detail::Precision::s).buckets.at(1);
  big.size = 256;
  big.gpu_parts = 32;
  big.kernel = {};
  big.dynamic = true;
  prof::Bucket other = big;
  other.size = 1024;
  other.dynamic = false;
  p.precisions.at(detail::Precision::s).buckets = {big, other};
  prof::save(p, prof::path_for(here()));
  auto call = [](int64_t n, const Options& o) {
    std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n, o, &r);
    for (float x : c) EXPECT_EQ(x, float(n));
    return r;
  };
  const Report r = call(256, {});
  EXPECT_EQ(r.balance, Balance::Dynamic);
  EXPECT_EQ(r.gpu_rows + r.cpu_rows, 256);
  EXPECT_EQ(call(1024, {}).balance, Balance::Static);
  Options o;
  o.balance = Balance::Static;
  EXPECT_EQ(call(256, o).balance, Balance::Static);
}

// The split search measures its winner under dynamic balance too, logs it, and keeps the faster.
TEST_F(ProfileDir, TheTunerChoosesTheFasterBalance) {
  auto o = tiny();
  o.precisions = {detail::Precision::s};
  o.split_min = o.split_max = 8;  // a split in the middle, however it compares
  const auto report = tuner::tune(o);
  std::ifstream log(report.log);
  std::vector<prof::LogRecord> records;
  for (std::string line; std::getline(log, line);)
    if (auto r = prof::from_log_line(line); r && r->kind == "split") records.push_back(*r);
  int interior = 0;
  for (const auto& b : report.profile.precisions.at(detail::Precision::s).buckets) {
    if (b.gpu_parts == 0 || b.gpu_parts == b.parts) continue;
    ++interior;
    const prof::LogRecord *stat = nullptr, *dyn = nullptr;
    for (const auto& r : records)
      if (r.size == b.size && r.gpu_parts == b.gpu_parts && r.cpu_threads == b.cpu_threads &&
          r.kernel == b.kernel && r.seconds)
        (r.dynamic ? dyn : stat) = &r;
    ASSERT_TRUE(stat && dyn) << "size " << b.size << ": both balances measured";
    EXPECT_EQ(b.dynamic, dyn->cost < stat->cost) << "size " << b.size;
  }
  if (interior == 0) GTEST_SKIP() << "the search kept no split on this device";
}

TEST_F(ProfileDir, ChoiceFollowsTheNearestBucket) {
  const prof::Profile p = sample(here());
  EXPECT_EQ(prof::choose(p, detail::Precision::s, 100, 100, 100).fraction,
            0.0);  // under half of 256: CPU
  EXPECT_EQ(prof::choose(p, detail::Precision::s, 100, 100, 100).bucket, 0);
  // Sent to the GPU anyway, such a call runs the smallest bucket's kernels, not the precision's.
  prof::Profile tiny_kernels = p;
  prof::Bucket& smallest = tiny_kernels.precisions.at(detail::Precision::s).buckets.at(0);
  smallest.kernel = {{"MWG", 16}, {"NWG", 16}, {"MDIMC", 4}, {"NDIMC", 4}};
  smallest.gpu_kernel = {{"MWG", 8}, {"NWG", 16}, {"MDIMC", 4}, {"NDIMC", 4}};
  const auto below = prof::choose(tiny_kernels, detail::Precision::s, 100, 100, 100);
  EXPECT_EQ(below.fraction, 0.0);
  EXPECT_EQ(below.kernel->at("MWG"), 16);
  EXPECT_EQ(below.gpu_kernel->at("MWG"), 8);
  EXPECT_FALSE(below.resident);
  smallest.resident = p.precisions.at(detail::Precision::s).buckets.at(2).resident;
  smallest.resident->gpu_parts = smallest.parts;  // the GPU alone on that memory
  const auto below_resident =
      prof::choose(tiny_kernels, detail::Precision::s, 100, 100, 100, /*resident=*/true);
  EXPECT_EQ(below_resident.fraction, 0.0);
  EXPECT_EQ(below_resident.bucket, 0);
  EXPECT_EQ(below_resident.gpu_kernel->at("MWG"), 32) << "the kernel measured on that memory";
  EXPECT_EQ(prof::choose(p, detail::Precision::s, 100, 100, 100).gpu_kernel->at("MWG"), 32)
      << "a bucket without kernels of its own leaves the precision's";
  EXPECT_EQ(prof::choose(p, detail::Precision::s, 300, 300, 300).bucket, 256);
  const auto c =
      prof::choose(p, detail::Precision::s, 4096, 4096, 1024);  // cbrt = 2580: nearest 2048
  EXPECT_EQ(c.bucket, 2048);
  EXPECT_DOUBLE_EQ(c.fraction, 0.75);
  EXPECT_EQ(c.cpu_threads, 3);
  EXPECT_EQ(c.kernel->at("MWG"), 64);
  EXPECT_EQ(c.gpu_kernel->at("MWG"), 32) << "strategy gpu takes the GPU-only kernel";
  const auto h = prof::choose(p, detail::Precision::s, 8000, 8000, 8000);
  EXPECT_EQ(h.bucket, 8192);
  EXPECT_EQ(h.gpu_kernel->at("MWG"), 128) << "the bucket's own GPU-only kernel comes first";
  EXPECT_FALSE(h.resident);
  EXPECT_DOUBLE_EQ(h.fraction, 0.75);
  const auto hr = prof::choose(p, detail::Precision::s, 8000, 8000, 8000, /*resident=*/true);
  EXPECT_TRUE(hr.resident);
  EXPECT_DOUBLE_EQ(hr.fraction, 60.0 / 64.0);
  EXPECT_EQ(hr.cpu_threads, 7);
  EXPECT_EQ(hr.kernel->at("MWG"), 32);
  EXPECT_EQ(hr.gpu_kernel->at("MWG"), 128);
  prof::Profile q = p;
  q.precisions.at(detail::Precision::s).buckets.at(2).resident->gpu_parts =
      64;  // the GPU alone on that memory
  const auto gr = prof::choose(q, detail::Precision::s, 8000, 8000, 8000, /*resident=*/true);
  EXPECT_DOUBLE_EQ(gr.fraction, 1.0);
  EXPECT_EQ(gr.gpu_kernel->at("MWG"), 32)
      << "strategy gpu takes the kernel measured on that memory";
  const auto cr = prof::choose(p, detail::Precision::s, 4096, 4096, 1024, /*resident=*/true);
  EXPECT_FALSE(cr.resident) << "a bucket without a resident split keeps its own";
  EXPECT_DOUBLE_EQ(cr.fraction, 0.75);
  EXPECT_EQ(prof::choose(p, detail::Precision::d, 4096, 4096, 4096).fraction, 0.0)
      << "no dgemm entry: CPU";
}

TEST_F(ProfileDir, AProfileForAnotherSetupWarnsAndIsNotApplied) {
  prof::Identity other = here();
  other.driver = "some other driver";
  // Under the name its own tune gives it: the lookup reads only the files named for the device.
  prof::save(sample(other), prof::path_for(other));
  ::testing::internal::CaptureStderr();
  auto active = prof::active(here());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(!active || active->origin.rfind("built-in:", 0) == 0)
      << "the stale profile was applied";
  EXPECT_NE(err.find("not applying profile"), std::string::npos) << err;
  EXPECT_NE(err.find("some other driver"), std::string::npos) << err;
}

TEST_F(ProfileDir, AnIncompatibleVersionWarnsAndIsNotApplied) {
  prof::Profile p = sample(here());
  p.tandem_version = "9.9.0";
  prof::save(p, prof::path_for(here()));
  ::testing::internal::CaptureStderr();
  auto active = prof::active(here());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(!active || active->origin.rfind("built-in:", 0) == 0);
  EXPECT_NE(err.find("9.9.0"), std::string::npos) << err;
}

TEST_F(ProfileDir, ACorruptFileWarnsAndCallsStillWork) {
  { std::ofstream(prof::path_for(here())) << "{ \"format\": 1, \"identity\": [ truncated"; }
  { std::ofstream(dir_ / "empty.json") << ""; }
  ::testing::internal::CaptureStderr();
  const Report r = run_auto(96);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ignoring profile"), std::string::npos) << err;
  EXPECT_TRUE(r.profile.empty() || r.profile.rfind("built-in:", 0) == 0) << r.profile;
  EXPECT_THROW(prof::load(prof::path_for(here())), std::runtime_error);
  EXPECT_THROW(prof::from_json("{\"format\": 1}"), std::runtime_error);
  EXPECT_FALSE(prof::from_log_line("{\"kind\": \"kernel\"").has_value());
}

TEST_F(ProfileDir, BuiltInDatabaseParses) {
  for (const auto& p : prof::builtin()) {
    EXPECT_TRUE(prof::compatible(p)) << p.origin;
    EXPECT_TRUE(p.match == "device" || p.match == "platform" || p.match == "any") << p.origin;
  }
}

}  // namespace
}  // namespace tandem::test
