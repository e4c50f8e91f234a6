// The cost model in a profile, end to end on PoCL: it survives the profile's JSON (and a broken
// one is refused), auto plans with it exactly the calls no bucket measured, each call's rows and
// threads are the model's plan and its result is right, several devices share a call by their
// models, and the co-tuner fits and stores a model that predicts what it measured.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <random>

#include "cotuner.hpp"
#include "cpu/blas.hpp"
#include "cpu/topology.hpp"
#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "model/cost_model.hpp"
#include "plan/device_profile.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "reference.hpp"
#include "seam_values.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace fs = std::filesystem;
namespace prof = detail::profile;
namespace cost = detail::cost;

class ModelPlan : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tandem-model-" + std::to_string(::getpid()) + "-" +
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
  fs::path dir_;
};

prof::Identity identity_of(const std::string& selector) {
  return prof::identity_for(detail::gpu::info(*detail::gpu::open_device(selector)));
}

// A device `device_gflops` fast beside a CPU `cpu_gflops` fast, on a unified device (no bus) or,
// with `discrete`, one behind a bus.
cost::Model model(double device_gflops, double cpu_gflops, bool discrete = false) {
  cost::Model m;
  m.cpu.gflops_by_threads = {{1, cpu_gflops / 2}, {2, cpu_gflops}};
  m.cpu.half_m = m.cpu.half_n = m.cpu.half_k = 8;
  m.device.discrete = discrete;
  m.device.kernel_gflops = device_gflops;
  m.device.tile_m = 32;
  m.device.tile_n = 32;
  m.device.compute_units = 2;
  m.device.bus_in = m.device.bus_out = discrete ? 20e9 : 0;
  m.device.pack_by_threads = {{1, 5e9}, {2, 9e9}};
  m.both_busy = 0.9;
  return m;
}

// A profile for `id` with one bucket at 256 (the GPU alone, with a 32-row kernel) and `m` as the
// single-precision model.
prof::Profile profile_with(const prof::Identity& id, const cost::Model& m) {
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.identity = id;
  prof::PrecisionProfile pp;
  pp.gpu_kernel = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8}};
  pp.gpu_size = 256;
  prof::Bucket b;
  b.size = 256;
  b.parts = 64;
  b.gpu_parts = 64;
  b.kernel = pp.gpu_kernel;
  pp.buckets = {b};
  pp.model = m;
  pp.observations = {{"cpu", 64, 64, 64, 0, 2, 0, false, false, 0, 1e-4, 1.1e-4}};
  p.precisions[detail::Precision::s] = pp;
  return p;
}

struct Call {
  Report report;
  double error = 0;
};

// C = A B + beta C through auto (or `o`), checked against the reference.
Call run(int64_t m, int64_t n, int64_t k, float beta, const Options& o = {}) {
  std::mt19937 rng(static_cast<unsigned>(m * 31 + n * 7 + k));
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (auto* v : {&a, &b, &c})
    for (auto& x : *v) x = d(rng);
  std::vector<double> want(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = beta * double(c[i * n + j]);
      for (int64_t p = 0; p < k; ++p) s += double(a[i * k + p]) * double(b[p * n + j]);
      want[i * n + j] = s;
    }
  Call call;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n,
              beta, c.data(), n, o, &call.report);
  for (int64_t i = 0; i < m * n; ++i)
    call.error = std::max(call.error, std::fabs(double(c[i]) - want[i]));
  return call;
}

int cores() {
  return std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
}

TEST_F(ModelPlan, TheModelSurvivesTheProfileAndABrokenOneIsRefused) {
  const prof::Profile p = profile_with(identity_of(""), model(500, 50, true));
  const prof::Profile q = prof::from_json(prof::to_json(p));
  EXPECT_EQ(prof::to_json(q), prof::to_json(p));
  ASSERT_TRUE(q.precisions.at(detail::Precision::s).model);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).model->device.bus_in, 20e9);
  ASSERT_EQ(q.precisions.at(detail::Precision::s).observations.size(), 1u);
  EXPECT_EQ(q.precisions.at(detail::Precision::s).observations[0].predicted, 1.1e-4);
  const std::string text = prof::to_json(p);
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return t;
  };
  EXPECT_THROW(prof::from_json(broken("\"overlap\": 0.0", "\"overlap\": 2.0")), std::runtime_error);
  EXPECT_THROW(prof::from_json(broken("\"kernel_gflops\": 500.0", "\"kernel_gflops\": 0.0")),
               std::runtime_error);
  EXPECT_THROW(prof::from_json(broken("\"half_n\"", "\"half_nn\"")), std::runtime_error);
  EXPECT_THROW(prof::from_json(broken("[\n              1.0,", "[\n              3.0,")),
               std::runtime_error)
      << "a rate table out of order";
}

// Square calls near the bucket follow it; the others follow the model, whose plan the test
// works out itself; every result is right.
TEST_F(ModelPlan, AutoPlansWithTheModelWhatNoBucketMeasured) {
  const cost::Model m = model(40, 40);  // even: the model splits
  prof::save(profile_with(identity_of(""), m), prof::path_for(identity_of("")));
  const Call square = run(256, 256, 256, 0);
  EXPECT_FALSE(square.report.profile_model);
  EXPECT_EQ(square.report.profile_bucket, 256);
  EXPECT_EQ(square.report.gpu_rows, 256) << "the bucket's split: the GPU alone";

  for (const auto& [mm, n, k, beta] :
       {std::tuple<int64_t, int64_t, int64_t, float>{512, 512, 32, 1},
        {96, 700, 300, 0},
        {1000, 40, 300, 0.5f}}) {
    const Call call = run(mm, n, k, beta);
    const Report& r = call.report;
    EXPECT_TRUE(r.profile_model) << mm << "x" << n << "x" << k;
    EXPECT_LT(call.error, 1e-3);
    const cost::Shape s{mm, n, k, 4, beta != 0, false};
    const cost::Side side{&m.device, 32, m.both_busy, m.cpu_busy};
    const cost::Plan want = cost::best_plan(m.cpu, {side}, s, cores(), m.split_margin);
    EXPECT_GT(want.rows[0], 0) << "sides this even split every one of these shapes";
    EXPECT_GT(want.cpu_rows, 0);
    EXPECT_EQ(r.gpu_rows, want.rows[0]) << mm << "x" << n << "x" << k;
    EXPECT_EQ(r.cpu_rows, mm - want.rows[0]);
    if (want.cpu_rows > 0 && want.rows[0] > 0) {
      EXPECT_EQ(r.cpu_threads, want.cpu_threads);
    }
    EXPECT_NEAR(r.predicted_seconds, want.seconds, 1e-12);
  }
  // Strategies other than auto take no plan from the model.
  Options hybrid;
  hybrid.strategy = Strategy::Hybrid;
  hybrid.gpu_fraction = 0.25;
  const Call h = run(512, 512, 32, 1, hybrid);
  EXPECT_FALSE(h.report.profile_model);
  EXPECT_EQ(h.report.gpu_rows, 128);
}

// Where the model finds the device no help the call stays whole on the CPU; where it finds the
// CPU no help, whole on the device.
TEST_F(ModelPlan, AutoKeepsAWholeCallOnTheSideTheModelFavours) {
  prof::save(profile_with(identity_of(""), model(1, 1000)), prof::path_for(identity_of("")));
  const Call cpu = run(512, 512, 32, 1);
  EXPECT_TRUE(cpu.report.profile_model);
  EXPECT_EQ(cpu.report.gpu_rows, 0);
  EXPECT_LT(cpu.error, 1e-3);
  prof::forget();
  prof::save(profile_with(identity_of(""), model(1e6, 0.1)), prof::path_for(identity_of("")));
  const Call gpu = run(512, 512, 32, 1);
  EXPECT_TRUE(gpu.report.profile_model);
  EXPECT_EQ(gpu.report.gpu_rows, 512);
  EXPECT_LT(gpu.error, 1e-3);
}

// On a discrete device from ordinary memory the model's split leaves the feeder its cores: the
// CPU share has at most the cores less one, and the device's part names its feeder.
TEST_F(ModelPlan, ADiscreteSplitKeepsItsFeeder) {
  const cost::Model m = model(40, 40, /*discrete=*/true);
  prof::save(profile_with(identity_of(""), m), prof::path_for(identity_of("")));
  detail::seams::Override seams(discrete());
  const Call call = run(1024, 1024, 64, 1);
  const Report& r = call.report;
  EXPECT_TRUE(r.profile_model);
  EXPECT_LT(call.error, 1e-3);
  const cost::Side side{&m.device, 32, m.both_busy, m.cpu_busy};
  const cost::Plan want =
      cost::best_plan(m.cpu, {side}, {1024, 1024, 64, 4, true, false}, cores(), m.split_margin);
  ASSERT_GT(want.rows[0], 0);
  ASSERT_GT(want.cpu_rows, 0);
  EXPECT_GE(want.feeders, 1);
  EXPECT_EQ(r.gpu_rows, want.rows[0]);
  EXPECT_EQ(r.cpu_threads, want.cpu_threads);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].feeder_threads, want.feeders);
  EXPECT_LE(r.cpu_threads + r.devices[0].feeder_threads, cores());
}

// A call whose C alone lies in tandem_malloc memory (pinned) is planned as the share runs it: C
// copied as it is, A and B packed.
TEST_F(ModelPlan, MixedMemoryIsPlannedOperandByOperand) {
  const cost::Model m = model(40, 40, /*discrete=*/true);
  prof::save(profile_with(identity_of(""), m), prof::path_for(identity_of("")));
  detail::seams::Override seams(discrete(false, /*pin_every_block=*/true));
  const int64_t mm = 1024, n = 1024, k = 8;  // C's copies outweigh the kernel
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> a(mm * k), b(k * n);
  for (auto* v : {&a, &b})
    for (auto& x : *v) x = d(rng);
  auto* c = static_cast<float*>(tandem_malloc(sizeof(float) * mm * n));
  ASSERT_NE(c, nullptr);
  for (int64_t i = 0; i < mm * n; ++i) c[i] = d(rng);
  std::vector<double> want_c(mm * n);
  for (int64_t i = 0; i < mm; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = double(c[i * n + j]);
      for (int64_t p = 0; p < k; ++p) sum += double(a[i * k + p]) * double(b[p * n + j]);
      want_c[i * n + j] = sum;
    }
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, mm, n, k, 1.0f, a.data(), k, b.data(), n,
              1.0f, c, n, {}, &r);
  double error = 0;
  for (int64_t i = 0; i < mm * n; ++i) error = std::max(error, std::fabs(c[i] - want_c[i]));
  tandem_free(c);
  EXPECT_LT(error, 1e-3);
  EXPECT_TRUE(r.profile_model);
  const cost::Side side{&m.device, 32, m.both_busy, m.cpu_busy};
  cost::Shape mixed{mm, n, k, 4, true, false};
  mixed.c_pinned = true;
  const cost::Plan want = cost::best_plan(m.cpu, {side}, mixed, cores(), m.split_margin);
  const cost::Plan ordinary =
      cost::best_plan(m.cpu, {side}, {mm, n, k, 4, true, false}, cores(), m.split_margin);
  ASSERT_NE(want.seconds, ordinary.seconds) << "the test tells the two apart";
  EXPECT_NEAR(r.predicted_seconds, want.seconds, 1e-12);
  EXPECT_EQ(r.gpu_rows, want.rows[0]);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.c, Report::Buffer::Pinned);
}

// Several devices share every call under auto by their models, each device's rows as the
// models' plan over all of them puts them.
TEST_F(ModelPlan, DevicesShareACallByTheirModels) {
  if (detail::gpu::list_devices().size() < 2)
    GTEST_SKIP() << "one OpenCL device (POCL_DEVICES=\"basic pthread\" shows two)";
  const cost::Model slow = model(15, 40), fast = model(40, 40);
  prof::save(profile_with(identity_of("0"), slow), prof::path_for(identity_of("0")));
  prof::save(profile_with(identity_of("1"), fast), prof::path_for(identity_of("1")));
  Options o;
  o.device = "0,1";
  for (const auto& [m, n, k] :
       {std::tuple<int64_t, int64_t, int64_t>{1024, 512, 64}, {256, 256, 256}}) {
    const Call call = run(m, n, k, 1, o);
    const Report& r = call.report;
    EXPECT_TRUE(r.profile_model) << "several devices: the models plan even a bucket's shape";
    EXPECT_LT(call.error, 1e-3);
    const cost::Side a{&slow.device, 32, slow.both_busy, slow.cpu_busy},
        b{&fast.device, 32, fast.both_busy, fast.cpu_busy};
    const cost::Plan want =
        cost::best_plan(slow.cpu, {a, b}, {m, n, k, 4, true, false}, cores(), slow.split_margin);
    ASSERT_EQ(want.rows.size(), 2u);
    EXPECT_GT(want.rows[0], 0);
    EXPECT_GT(want.rows[1], want.rows[0]) << "the faster device takes more";
    std::vector<int64_t> got(2, 0);
    for (const auto& d : r.devices) got[d.index] = d.rows;
    EXPECT_EQ(got, want.rows) << m << "x" << n << "x" << k;
    EXPECT_EQ(r.cpu_rows, want.cpu_rows);
  }
}

// Without a named set, auto weighs every GPU (PoCL's two devices counted as GPUs) where both
// profiles have a model: the second alone or both take the call only where the models' plan
// beats the first alone by the split margin; elsewhere, and under other strategies, the first
// device takes it alone, as it would (its bucket included). PoCL's devices, not GPUs, are never
// weighed.
TEST_F(ModelPlan, AutoOffersEveryGpuWhereTheModelsSayItPays) {
  if (detail::gpu::list_devices().size() < 2)
    GTEST_SKIP() << "one OpenCL device (POCL_DEVICES=\"basic pthread\" shows two)";
  detail::seams::Values gpus;
  gpus.assume_gpus = true;
  const int64_t m = 1024, n = 512, k = 64;
  auto devices_of = [](const Report& r) {
    std::vector<int> got;
    for (const auto& d : r.devices)
      if (d.rows > 0) got.push_back(d.index);
    return got;
  };
  const std::string first = detail::gpu::info(*detail::gpu::open_device("0")).describe();
  {
    const detail::seams::Override as_gpus(gpus);
    const Call call = run(m, n, k, 1);
    EXPECT_LT(call.error, 1e-3);
    EXPECT_EQ(call.report.device.find(';'), std::string::npos)
        << "no model to judge the second device by: " << call.report.device;
  }
  const cost::Model fast = model(40, 40), slow = model(0.5, 40);
  prof::save(profile_with(identity_of("0"), fast), prof::path_for(identity_of("0")));
  prof::save(profile_with(identity_of("1"), fast), prof::path_for(identity_of("1")));
  prof::forget();  // the call above found no profile, and that is remembered
  const cost::Side a{&fast.device, 32, fast.both_busy, fast.cpu_busy};
  const cost::Shape s{m, n, k, 4, true, false};
  {
    const detail::seams::Override as_gpus(gpus);
    const Call call = run(m, n, k, 1);
    EXPECT_LT(call.error, 1e-3);
    const cost::Plan both = cost::best_plan(fast.cpu, {a, a}, s, cores(), fast.split_margin);
    const cost::Plan one = cost::best_plan(fast.cpu, {a}, s, cores(), fast.split_margin);
    ASSERT_LT(both.seconds * (1 + fast.split_margin), one.seconds) << "the pair pays here";
    EXPECT_EQ(devices_of(call.report), (std::vector<int>{0, 1})) << call.report.device;
    std::vector<int64_t> got(2, 0);
    for (const auto& d : call.report.devices) got[d.index] = d.rows;
    EXPECT_EQ(got, both.rows);
    EXPECT_NE(call.report.device.find(';'), std::string::npos);
    EXPECT_TRUE(call.report.profile_model);
    EXPECT_NEAR(call.report.predicted_seconds, both.seconds, 1e-12);
    Options gpu;
    gpu.strategy = Strategy::Gpu;
    const Call alone = run(m, n, k, 1, gpu);
    EXPECT_EQ(devices_of(alone.report), std::vector<int>{0}) << "only auto judges a set";
    EXPECT_LT(alone.error, 1e-3);
  }
  {
    const Call call = run(m, n, k, 1);
    EXPECT_EQ(call.report.device.find(';'), std::string::npos)
        << "PoCL's devices are no GPUs: " << call.report.device;
    EXPECT_EQ(call.report.device.rfind(first, 0), 0u) << call.report.device;
  }
  prof::forget();
  prof::save(profile_with(identity_of("1"), slow), prof::path_for(identity_of("1")));
  {
    const detail::seams::Override as_gpus(gpus);
    const cost::Side b{&slow.device, 32, slow.both_busy, slow.cpu_busy};
    const cost::Plan both = cost::best_plan(fast.cpu, {a, b}, s, cores(), fast.split_margin);
    const cost::Plan one = cost::best_plan(fast.cpu, {a}, s, cores(), fast.split_margin);
    ASSERT_GE(both.seconds * (1 + fast.split_margin), one.seconds) << "the pair does not pay";
    const Call call = run(m, n, k, 1);
    EXPECT_LT(call.error, 1e-3);
    EXPECT_EQ(call.report.device.find(';'), std::string::npos) << call.report.device;
    EXPECT_EQ(call.report.device.rfind(first, 0), 0u) << call.report.device;
    const Call again = run(m, n, k, 0);
    EXPECT_EQ(again.report.device.find(';'), std::string::npos) << again.report.device;
  }
  // A slow first GPU (a laptop's integrated one, listed first) gives way to a faster one alone.
  prof::forget();
  prof::save(profile_with(identity_of("0"), slow), prof::path_for(identity_of("0")));
  prof::save(profile_with(identity_of("1"), fast), prof::path_for(identity_of("1")));
  {
    const detail::seams::Override as_gpus(gpus);
    const cost::Side lagging{&slow.device, 32, slow.both_busy, slow.cpu_busy};
    const double margin = slow.split_margin;
    const cost::Plan lagging_alone = cost::best_plan(slow.cpu, {lagging}, s, cores(), margin);
    const cost::Plan second = cost::best_plan(fast.cpu, {a}, s, cores(), fast.split_margin);
    const cost::Plan both = cost::best_plan(slow.cpu, {lagging, a}, s, cores(), margin);
    ASSERT_LT(second.seconds * (1 + margin), lagging_alone.seconds);
    ASSERT_GE(both.seconds * (1 + margin), second.seconds);
    const Call call = run(m, n, k, 1);
    EXPECT_LT(call.error, 1e-3);
    EXPECT_EQ(devices_of(call.report), std::vector<int>{1}) << call.report.device;
    EXPECT_EQ(call.report.gpu_rows, second.rows[0]);
    EXPECT_TRUE(call.report.profile_model);
    EXPECT_EQ(call.report.device, detail::gpu::info(*detail::gpu::open_device("1")).describe());
  }
  // A pair that gains, but by less than the margin the first device's model asks of a split.
  cost::Model wary = fast;
  wary.split_margin = 1.0;
  prof::forget();
  prof::save(profile_with(identity_of("0"), wary), prof::path_for(identity_of("0")));
  prof::save(profile_with(identity_of("1"), fast), prof::path_for(identity_of("1")));
  {
    const detail::seams::Override as_gpus(gpus);
    const cost::Side w{&wary.device, 32, wary.both_busy, wary.cpu_busy};
    const cost::Plan both = cost::best_plan(wary.cpu, {w, a}, s, cores(), wary.split_margin);
    const cost::Plan one = cost::best_plan(wary.cpu, {w}, s, cores(), wary.split_margin);
    ASSERT_LT(both.seconds, one.seconds);
    ASSERT_GE(both.seconds * (1 + wary.split_margin), one.seconds);
    const Call call = run(m, n, k, 1);
    EXPECT_LT(call.error, 1e-3);
    EXPECT_EQ(call.report.device.find(';'), std::string::npos) << call.report.device;
    // The first device alone then runs as it would: a bucket's shape follows the bucket.
    const cost::Plan square_both = cost::best_plan(
        wary.cpu, {w, a}, {256, 256, 256, 4, false, false}, cores(), wary.split_margin);
    const cost::Plan square_one = cost::best_plan(wary.cpu, {w}, {256, 256, 256, 4, false, false},
                                                  cores(), wary.split_margin);
    ASSERT_GE(square_both.seconds * (1 + wary.split_margin), square_one.seconds);
    const Call square = run(256, 256, 256, 0);
    EXPECT_LT(square.error, 1e-3);
    EXPECT_FALSE(square.report.profile_model);
    EXPECT_EQ(square.report.profile_bucket, 256);
    EXPECT_EQ(devices_of(square.report), std::vector<int>{0});
    EXPECT_EQ(square.report.gpu_rows, 256) << "the bucket's split: the GPU alone";
  }
}

// The co-tuner fits a model whose predictions for what it measured are filled in, and stores it;
// without it, none.
TEST_F(ModelPlan, TheTunerFitsAndStoresAModel) {
  tuner::TuneOptions o;
  o.precisions = {detail::Precision::s};
  o.budget_evaluations = 2;
  o.sizes = {64, 128};
  o.kernel_size = 128;
  o.reps = 2;
  o.top_kernels = 1;
  o.parts = 16;
  o.direct = false;
  o.batch = false;  // cotuner_test measures the batch rule
  const auto report = tuner::tune(o);
  EXPECT_EQ(report.precisions.at(0).model_failure, "");
  const prof::Profile p = prof::load(report.saved);
  const auto& pp = p.precisions.at(detail::Precision::s);
  ASSERT_TRUE(pp.model);
  EXPECT_TRUE(pp.model->usable());
  int kinds = 0;
  for (const char* what : {"cpu", "kernel", "pack", "device"}) {
    bool seen = false;
    for (const auto& ob : pp.observations) seen = seen || ob.what == what;
    EXPECT_TRUE(seen) << what;
    kinds += seen;
  }
  EXPECT_EQ(kinds, 4);
  for (const auto& ob : pp.observations) {
    EXPECT_GT(ob.seconds, 0) << ob.what;
    EXPECT_GT(ob.predicted, 0) << ob.what;
  }
  // A call no bucket measured now follows the model.
  prof::forget();
  EXPECT_TRUE(run(256, 256, 16, 1).report.profile_model);

  prof::forget();
  fs::remove(report.saved);
  o.model = false;
  const auto without = tuner::tune(o);
  EXPECT_FALSE(prof::load(without.saved).precisions.at(detail::Precision::s).model);
}

}  // namespace
}  // namespace tandem::test
