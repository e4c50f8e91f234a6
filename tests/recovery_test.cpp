// A device that fails partway through its rows (issue 16 item 8): the rows it finished stay, the
// rows it had written in place but not finished get their old values back, the CPU computes the
// rest, and C is right, with beta != 0 too; and no kernel launch is planned longer than the bound
// the data sets. On PoCL (ctest runs this with POCL_DEVICES="basic pthread", two devices), with
// the failure injected by the seams fail_device and fail_after_rows, which also write NaN over the
// rows the device would have finished next wherever it writes C in place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "gpu/device.hpp"
#include "plan/device_profile.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "reference.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

int device_count() { return static_cast<int>(detail::gpu::list_devices().size()); }

// C = 0.75 A B + beta C on the devices `o` names, checked against the reference; C with no
// padding (ldc = n), so a device that shares the host's memory writes it in place, unless its rows
// are `c_gap` apart beyond its n columns (a unified device stages such a C: in place it would copy
// the gaps back).
template <class T>
Report run_checked(int64_t m, int64_t n, int64_t k, double beta, const Options& o,
                   const std::string& what, int64_t c_gap = 0) {
  std::mt19937_64 rng(static_cast<uint64_t>(m * 7 + n));
  const T pad = std::numeric_limits<T>::quiet_NaN();
  auto a = make_matrix<T>(Layout::RowMajor, false, m, k, 0, rng, pad);
  auto b = make_matrix<T>(Layout::RowMajor, false, k, n, 0, rng, pad);
  auto c = make_matrix<T>(Layout::RowMajor, false, m, n, c_gap, rng, pad);
  const auto c0 = c;
  const auto ref = reference(a, b, c0, 0.75, beta);
  Report r;
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(0.75), a.ptr(), a.ld, b.ptr(),
          b.ld, T(beta), c.ptr(), c.ld, o, &r);
  expect_matches(c, c0, ref, k, what);
  EXPECT_EQ(r.gpu_rows + r.cpu_rows, m) << what;
  return r;
}

// The last device fails once `after` of its rows have reached C; the others and the CPU go on.
detail::seams::Values fails_after(int64_t after, bool discrete_devices) {
  detail::seams::Values v = discrete_devices ? discrete(true, true) : detail::seams::Values{};
  v.fail_device = device_count() - 1;
  v.fail_after_rows = after;
  return v;
}

// Hybrid over every device and the CPU, kernels of 64-row tiles launched 64 rows at a time.
Options every_device(Balance balance) {
  Options o;
  o.strategy = Strategy::Hybrid;
  o.gpu_fraction = 0.8;
  o.balance = balance;
  for (int i = 0; i < device_count(); ++i)
    o.device = o.device.value_or("") + (i ? "," : "") + std::to_string(i);
  o.kernel_params = {{"MWG", 64}, {"LAUNCH_ROWS", 64}};
  return o;
}

template <class T>
void fails_midway(bool discrete_devices, Balance balance, double beta) {
  const std::string what = std::string(discrete_devices ? "discrete" : "unified") +
                           (balance == Balance::Dynamic ? " dynamic" : " static") + " beta " +
                           std::to_string(beta);
  detail::seams::Override seams(fails_after(64, discrete_devices));
  const Report r = run_checked<T>(1024, 96, 48, beta, every_device(balance), what);
  EXPECT_TRUE(r.fell_back) << what;
  int failed = 0;
  for (const auto& d : r.devices) {
    if (!d.failed) continue;
    ++failed;
    EXPECT_EQ(d.index, device_count() - 1) << what;
    EXPECT_GE(d.finished_rows, 64) << what << ": the rows it finished before failing stay";
    EXPECT_NE(d.failure.find("fail_device"), std::string::npos) << what << ": " << d.failure;
  }
  EXPECT_EQ(failed, 1) << what;
}

TEST(Recovery, AUnifiedDeviceFailingMidwayWithBetaLeavesCRight) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  for (double beta : {0.5, 0.0, 1.0}) fails_midway<float>(false, Balance::Static, beta);
  fails_midway<double>(false, Balance::Static, -1.0);
  fails_midway<float>(false, Balance::Dynamic, 0.5);
}

TEST(Recovery, ADiscreteDeviceFailingMidwayWithBetaLeavesCRight) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  // tandem_malloc memory, pinned by the seam: the chunks' copies back write the caller's C.
  for (double beta : {0.5, 0.0}) fails_midway<float>(true, Balance::Static, beta);
  fails_midway<double>(true, Balance::Dynamic, 2.0);
}

// The same from ordinary memory on a discrete device: C's rows reach the caller only when
// unpacked (with beta != 0, beta C added then: the device never had C), so nothing needs putting
// back, no row gets beta C twice, and the finished chunks still stay; static and dynamic.
TEST(Recovery, ADiscreteDeviceFailingMidwayFromOrdinaryMemory) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  detail::seams::Values v = fails_after(64, true);
  v.pinned_from = test::kNothingPinned;
  detail::seams::Override seams(v);
  const Report r = run_checked<float>(1024, 96, 48, 0.5, every_device(Balance::Static),
                                      "discrete, ordinary memory");
  EXPECT_TRUE(r.fell_back);
  for (double beta : {2.0, -1.0, 1.0}) {
    const std::string what = "discrete, ordinary memory, dynamic, beta " + std::to_string(beta);
    EXPECT_TRUE(
        run_checked<double>(1024, 96, 48, beta, every_device(Balance::Dynamic), what).fell_back)
        << what;
  }
}

// A call whose C's old values cannot be trusted: OutputLost, naming why.
void expect_output_lost(const Options& o, const std::string& what) {
  std::mt19937_64 rng(7);
  auto a = make_matrix<float>(Layout::RowMajor, false, 1024, 48, 0, rng, 0.0f);
  auto b = make_matrix<float>(Layout::RowMajor, false, 48, 96, 0, rng, 0.0f);
  auto c = make_matrix<float>(Layout::RowMajor, false, 1024, 96, 0, rng, 0.0f);
  try {
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 1024, 96, 48, 1.0f, a.ptr(), a.ld,
                b.ptr(), b.ld, 0.5f, c.ptr(), c.ld, o);
    ADD_FAILURE() << what << ": C's old values were trusted after the device wrote C in place";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::OutputLost) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("could not be stopped"), std::string::npos) << e.what();
  }
}

// A failed device whose queues cannot then be drained (the seam fail_drain) may still write its
// staging, never the caller's C, where C is staged (ordinary memory on a discrete device, not the
// direct kernel; rows with gaps between them on a unified one): its unfinished rows go to the CPU
// as usual, beta != 0 included, and the rows it finished stay. Where its copies or its kernel
// write the caller's C (tandem_malloc memory, pinned; the direct kernel, which reads and writes C
// as it is stored; C in place on a unified device), C's old values cannot be trusted with beta !=
// 0: OutputLost; with beta = 0 they are not needed. Each case in a seams scope of its own: the
// device is out of use for the rest of the scope once it could not be drained.
TEST(Recovery, AFailedDeviceThatCannotBeDrainedLeavesAStagedCRight) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  detail::seams::Values v = fails_after(64, true);
  v.fail_drain = v.fail_device;
  v.pinned_from = test::kNothingPinned;
  {
    detail::seams::Override seams(v);
    const Report r = run_checked<float>(1024, 96, 48, 2.0, every_device(Balance::Static),
                                        "ordinary memory, undrained, static");
    EXPECT_TRUE(r.fell_back);
    for (const auto& d : r.devices)
      if (d.failed) {
        EXPECT_GE(d.finished_rows, 64) << "the rows it finished before failing stay";
      }
  }
  {
    detail::seams::Override seams(v);
    EXPECT_TRUE(run_checked<double>(1024, 96, 48, -1.0, every_device(Balance::Dynamic),
                                    "ordinary memory, undrained, dynamic")
                    .fell_back);
  }
  {
    detail::seams::Override seams(v);
    Options direct = every_device(Balance::Static);
    direct.kernel_params = {{"KERNEL", 2}, {"LAUNCH_ROWS", 64}};  // the direct kernel, in steps
    expect_output_lost(direct, "ordinary memory, the direct kernel");
  }
  v.pinned_from = 0;
  {
    detail::seams::Override seams(v);
    EXPECT_TRUE(run_checked<float>(1024, 96, 48, 0.0, every_device(Balance::Static),
                                   "pinned, undrained, beta 0")
                    .fell_back);
  }
  detail::seams::Override seams(v);
  expect_output_lost(every_device(Balance::Static), "pinned");
}

// The same on a unified device: a staged C is never reported lost (the host alone writes the
// caller's C from its staging), and the device, out of use once it could not be drained, gets no
// part of the next call.
TEST(Recovery, AnUndrainedUnifiedDeviceLeavesAStagedCRightAndIsUsedNoMore) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  detail::seams::Values v = fails_after(64, false);
  v.fail_drain = v.fail_device;
  detail::seams::Override seams(v);
  const Report r = run_checked<float>(1024, 96, 48, 2.0, every_device(Balance::Static),
                                      "unified, staged C, undrained", 5);
  EXPECT_TRUE(r.fell_back);
  bool failed = false;
  for (const auto& d : r.devices) failed = failed || (d.failed && d.index == v.fail_device);
  EXPECT_TRUE(failed) << "the undrained device took part and failed";
  for (Balance balance : {Balance::Static, Balance::Dynamic}) {
    const Report next = run_checked<float>(1024, 96, 48, 0.5, every_device(balance),
                                           "the next call, the undrained device out of use", 5);
    EXPECT_FALSE(next.fell_back);
    for (const auto& d : next.devices) EXPECT_NE(d.index, v.fail_device) << "a retired device";
  }
  // Named alone, it is an error under strategy gpu (C untouched) and the CPU's call otherwise.
  Options alone;
  alone.device = std::to_string(v.fail_device);
  alone.strategy = Strategy::Hybrid;
  alone.gpu_fraction = 0.5;
  const Report cpu = run_checked<float>(256, 32, 16, 1.0, alone, "the retired device alone", 3);
  EXPECT_TRUE(cpu.fell_back);
  EXPECT_EQ(cpu.gpu_rows, 0);
}

// Under strategy gpu a device failure is an error only while nothing of C was written: once
// rows reached C, the CPU finishes the rest, so C is right (Report::fell_back) rather than part
// new and part old; a failure before any row leaves C exactly as it was, with the error. On one
// device, unified and discrete, static and dynamic.
TEST(Recovery, UnderStrategyGpuCIsRightOrUntouched) {
  for (bool discrete_device : {false, true})
    for (Balance balance : {Balance::Static, Balance::Dynamic}) {
      const std::string what = std::string(discrete_device ? "discrete" : "unified") +
                               (balance == Balance::Dynamic ? " dynamic" : " static");
      detail::seams::Values v = discrete_device ? discrete(true, true) : detail::seams::Values{};
      v.fail_device = 0;
      v.fail_after_rows = 128;
      Options o;
      o.strategy = Strategy::Gpu;
      o.device = "0";
      o.balance = balance;
      o.kernel_params = {{"MWG", 64}, {"LAUNCH_ROWS", 64}};
      {
        detail::seams::Override seams(v);
        const Report r = run_checked<float>(1024, 96, 48, 2.0, o, what + ", failing midway");
        EXPECT_TRUE(r.fell_back) << what;
        EXPECT_GT(r.cpu_rows, 0) << what;
        ASSERT_EQ(r.devices.size(), 1u) << what;
        EXPECT_GE(r.devices[0].finished_rows, 128) << what;
      }
      // Before any row: on a unified device its first launch fails and nothing is in C (a
      // discrete share's later chunks run on, and may reach C first).
      if (discrete_device) continue;
      v.fail_after_rows = 0;
      detail::seams::Override seams(v);
      std::mt19937_64 rng(3);
      auto a = make_matrix<double>(Layout::RowMajor, false, 512, 40, 0, rng, 0.0);
      auto b = make_matrix<double>(Layout::RowMajor, false, 40, 64, 0, rng, 0.0);
      auto c = make_matrix<double>(Layout::RowMajor, false, 512, 64, 0, rng, 0.0);
      const auto c0 = c;
      EXPECT_THROW(gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 512, 64, 40, 0.75,
                                a.ptr(), a.ld, b.ptr(), b.ld, 2.0, c.ptr(), c.ld, o),
                   Error)
          << what;
      EXPECT_EQ(c.data, c0.data) << what << ": C changed although the call failed";
    }
}

// A device that fails before any row reached C (the seam's default) leaves all its rows.
TEST(Recovery, AFailureBeforeAnyRowLeavesEveryRowToTheCpu) {
  if (device_count() < 2) GTEST_SKIP() << "POCL_DEVICES=\"basic pthread\" shows two devices";
  detail::seams::Override seams(fails_after(0, false));
  const Report r = run_checked<float>(512, 64, 64, 0.5, every_device(Balance::Static), "at once");
  for (const auto& d : r.devices)
    if (d.failed) {
      EXPECT_EQ(d.finished_rows, 0);
    }
}

// LAUNCH_ROWS bounds each launch: a 1024-row share of 64-row tiles at most 64 rows a launch runs
// 16 launches on a unified device, and at least that many (its chunks and K slabs) on a discrete
// one.
TEST(Recovery, LaunchesAreBoundedInRows) {
  for (bool discrete_devices : {false, true}) {
    std::optional<detail::seams::Override> seams;
    if (discrete_devices) seams.emplace(discrete(true));
    Options o;
    o.strategy = Strategy::Gpu;
    o.device = "0";
    o.kernel_params = {{"MWG", 64}, {"LAUNCH_ROWS", 64}};
    const Report r = run_checked<float>(1024, 80, 40, 0.5, o, "bounded launches");
    ASSERT_EQ(r.devices.size(), 1u);
    if (discrete_devices)
      EXPECT_GE(r.devices[0].launches, 16);
    else
      EXPECT_EQ(r.devices[0].launches, 16);
  }
}

// The plan sets the bound from the rate the profile measured: on a device profiled at 1.1 MFLOPS
// (so 0.5 s is 550 k flops; one compute unit, PoCL's basic device), a 64 x 64 tile over k = 64
// (524 k flops) takes 0.48 s, so a launch is one row of tiles. Over k = 128 even one tile takes
// 0.95 s: the call is too long for the device's launches and stays on the CPU, but under
// strategy gpu, which launches a row of tiles at a time.
TEST(Recovery, ThePlanBoundsLaunchesByTheProfilesRate) {
  namespace fs = std::filesystem;
  namespace prof = detail::profile;
  const fs::path dir = fs::temp_directory_path() / ("tandem-recovery-" + std::to_string(getpid()));
  fs::create_directories(dir);
  setenv("TANDEM_PROFILE_DIR", dir.c_str(), 1);
  prof::forget();
  const auto id = prof::identity_for(detail::gpu::info(*detail::gpu::open_device("0")));
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.identity = id;
  prof::PrecisionProfile pp;
  pp.gpu_kernel = {{"MWG", 64}, {"NWG", 64}};
  prof::Bucket b;
  b.size = 256;
  b.gpu_parts = b.parts = 64;
  b.kernel = pp.gpu_kernel;
  b.gpu_gflops = 1.1e-3;
  pp.buckets = {b};
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(id));
  Options o;
  o.strategy = Strategy::Hybrid;
  o.gpu_fraction = 0.75;
  o.device = "0";
  ASSERT_EQ(detail::gpu::info(*detail::gpu::open_device("0")).compute_units, 1)
      << "POCL_DEVICES=\"basic pthread\": device 0 is PoCL's basic device";
  const Report r = run_checked<float>(512, 64, 64, 1.0, o, "profiled at 1.1 MFLOPS");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].rows, 384);
  EXPECT_EQ(r.devices[0].launches, 6);
  const Report longer = run_checked<float>(512, 64, 128, 1.0, o, "a tile over k = 128: 0.95 s");
  EXPECT_EQ(longer.gpu_rows, 0) << "too long for one launch: the CPU's";
  o.strategy = Strategy::Gpu;
  const Report gpu = run_checked<float>(512, 64, 128, 1.0, o, "the same under strategy gpu");
  ASSERT_EQ(gpu.devices.size(), 1u);
  EXPECT_EQ(gpu.gpu_rows, 512);
  EXPECT_EQ(gpu.devices[0].launches, 8) << "a row of tiles a launch";
  fs::remove_all(dir);
  prof::forget();
}

}  // namespace
}  // namespace tandem::test
