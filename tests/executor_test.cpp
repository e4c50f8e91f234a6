// The hybrid executor on the default OpenCL device (PoCL here): the order of enqueue, flush, CPU
// share and wait; zero-copy for aligned host memory and copies otherwise; calls from many
// threads; the split's rounding; and the CPU fallback when the GPU cannot run.
#include "run/executor.hpp"

#include <cblas.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu/topology.hpp"
#include "gpu/device.hpp"
#include "plan/plan.hpp"
#include "reference.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

// Row-major, no transposes, in tandem_malloc memory (offset elements in, to misalign on demand).
template <class T>
struct Case {
  int64_t m, n, k, offset;
  std::vector<T, Allocator<T>> a, b, c;
  std::vector<T> expected;

  Case(int64_t m_, int64_t n_, int64_t k_, uint64_t seed, int64_t offset_ = 0)
      : m(m_), n(n_), k(k_), offset(offset_) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    a.resize(static_cast<size_t>(m * k + offset));
    b.resize(static_cast<size_t>(k * n + offset));
    c.resize(static_cast<size_t>(m * n + offset));
    for (auto& x : a) x = static_cast<T>(dist(rng));
    for (auto& x : b) x = static_cast<T>(dist(rng));
    for (auto& x : c) x = static_cast<T>(dist(rng));
    expected.assign(static_cast<size_t>(m * n), T(0));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(A()[i * k + p]) * double(B()[p * n + j]);
        expected[static_cast<size_t>(i * n + j)] = static_cast<T>(0.5 * s - double(C()[i * n + j]));
      }
  }
  const T* A() const { return a.data() + offset; }
  const T* B() const { return b.data() + offset; }
  T* C() { return c.data() + offset; }
  const T* C() const { return c.data() + offset; }

  void run(const Options& o, Report* r = nullptr) {
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(0.5), A(), k, B(), n, T(-1), C(),
            n, o, r);
  }
  void check(const std::string& what) const {
    const double tol =
        static_cast<double>(k + 2) * 4.0 * std::numeric_limits<T>::epsilon() * double(k);
    int bad = 0;
    for (int64_t i = 0; i < m * n; ++i)
      if (!(std::fabs(double(C()[i]) - double(expected[static_cast<size_t>(i)])) <= tol)) ++bad;
    EXPECT_EQ(bad, 0) << what;
  }
};

// One call on a fresh case, checked against its reference.
template <class T>
void run_checked(int64_t m, int64_t n, int64_t k, uint64_t seed, const Options& o,
                 const std::string& what, int64_t offset = 0) {
  Case<T> c(m, n, k, seed, offset);
  c.run(o);
  c.check(what);
}

Options hybrid(double f) {
  Options o;
  o.strategy = Strategy::Hybrid;
  o.gpu_fraction = f;
  return o;
}

Options gpu_only() {
  Options o;
  o.strategy = Strategy::Gpu;
  return o;
}

bool default_device_is_unified() {
  return detail::gpu::info(*detail::gpu::open_device("")).unified_memory;
}

TEST(Executor, FlushesBeforeTheCpuShareAndWaitsAfterIt) {
  Case<float> t(300, 200, 150, 1);
  Report r;
  t.run(hybrid(0.5), &r);
  t.check("hybrid 0.5");
  ASSERT_EQ(r.strategy, Strategy::Hybrid);
  ASSERT_GT(r.gpu_rows, 0);
  ASSERT_GT(r.cpu_rows, 0);
  EXPECT_EQ(r.gpu_rows + r.cpu_rows, 300);
  EXPECT_LE(r.t_start, r.t_gpu_enqueued);
  ASSERT_GT(r.t_flush, 0) << "clFlush was never called";
  EXPECT_LE(r.t_gpu_enqueued, r.t_flush);
  EXPECT_LE(r.t_flush, r.t_cpu_start);
  EXPECT_LE(r.t_cpu_start, r.t_cpu_end);
  // Waited for after the CPU share where that runs on this thread; on a discrete device it runs
  // beside the feeding (DiscreteHybridFeedsBesideTheCpuShare).
  if (default_device_is_unified()) {
    EXPECT_LE(r.t_cpu_end, r.t_gpu_done);
  }
  EXPECT_LE(r.t_cpu_end, r.t_end);
  EXPECT_LE(r.t_gpu_done, r.t_end);
  EXPECT_GT(r.gpu_kernel_seconds, 0.0);
  // The kernel had left the host's queue before the CPU share started. (PoCL submits eagerly, so
  // here this holds even without the flush; t_flush above is what catches a missing flush.)
  EXPECT_TRUE(r.gpu_submitted_at_cpu_start);
  EXPECT_FALSE(r.device.empty());
  EXPECT_NE(r.kernel.find("MWG="), std::string::npos);
}

TEST(Executor, HybridSplitFollowsTheKernelTile) {
  Case<double> t(256, 64, 32, 2);
  Report r;
  t.run(hybrid(0.3), &r);
  t.check("hybrid 0.3");
  // The kernel that ran (the profile's or the defaults): its row tile divides the GPU's rows.
  const auto at = r.kernel.find("MWG=");
  ASSERT_NE(at, std::string::npos) << r.kernel;
  const int mwg = std::stoi(r.kernel.substr(at + 4));
  EXPECT_EQ(r.gpu_rows % mwg, 0) << r.gpu_rows << " rows, " << r.kernel;
}

TEST(Executor, ZeroCopyForTandemMallocMemoryOnUnifiedDevices) {
  ASSERT_TRUE(default_device_is_unified())
      << "the test machine's OpenCL device (PoCL) shares memory";
  Case<float> t(128, 96, 80, 3);
  Report r;
  Options o;
  o.strategy = Strategy::Gpu;
  // Read both operands as stored (a tuned profile may pick a codelet that copies one).
  o.kernel_params = {{"A_T", -1}, {"B_T", -1}};
  t.run(o, &r);
  t.check("gpu zero-copy");
  EXPECT_EQ(r.a, Report::Buffer::ZeroCopy);
  EXPECT_EQ(r.b, Report::Buffer::ZeroCopy);
  EXPECT_EQ(r.c, Report::Buffer::ZeroCopy);
}

TEST(Executor, CopiesWhenMemoryIsMisaligned) {
  Case<float> t(128, 96, 80, 4, /*offset=*/1);
  Report r;
  Options o;
  o.strategy = Strategy::Gpu;
  t.run(o, &r);
  t.check("gpu copy");
  EXPECT_EQ(r.a, Report::Buffer::Copy);
  EXPECT_EQ(r.b, Report::Buffer::Copy);
  EXPECT_EQ(r.c, Report::Buffer::Copy);
}

TEST(Executor, DiscretePathStagesEveryOperand) {
  detail::seams::Override seams(test::discrete());
  Case<double> t(150, 90, 70, 6);
  Report r;
  Options o;
  o.strategy = Strategy::Gpu;
  t.run(o, &r);  // beta = -1: C comes back and the host adds beta C to it
  t.check("gpu discrete");
  EXPECT_EQ(r.a, Report::Buffer::Copy);
  EXPECT_EQ(r.b, Report::Buffer::Copy);
  EXPECT_EQ(r.c, Report::Buffer::Copy);
}

// A call whose device times nobody reads (no Report, no log) skips reading them and is otherwise
// the same call: C equal to the bit with a timed call's, on a discrete and on a unified device.
TEST(Executor, UntimedCallsGiveTheTimedCallsC) {
  for (bool discrete : {true, false}) {
    std::optional<detail::seams::Override> seams;
    if (discrete) seams.emplace(test::discrete());
    for (Options o : {gpu_only(), hybrid(0.5)}) {
      o.balance = Balance::Static;  // the same rows to the same side both times
      Case<float> timed(130, 70, 90, 8), untimed(130, 70, 90, 8);
      Report r;
      timed.run(o, &r);
      untimed.run(o);
      timed.check("timed");
      untimed.check("untimed");
      EXPECT_GT(r.gpu_kernel_seconds, 0.0);
      EXPECT_EQ(timed.c, untimed.c) << (discrete ? "discrete" : "unified");
    }
  }
}

// On a discrete device the CPU share runs on a thread of its own while the calling thread packs
// the GPU's remaining chunks and unpacks C: the flush still comes before the CPU share starts,
// and both sides' rows are right (beta != 0: the host adds beta C to what comes back).
TEST(Executor, DiscreteHybridFeedsBesideTheCpuShare) {
  detail::seams::Override seams(test::discrete(/*chunk_every_share=*/true));
  for (int threads : {1, 2}) {
    Case<float> t(700, 260, 190, 11 + threads);
    Report r;
    Options o = hybrid(0.6);
    o.cpu_threads = threads;  // 2: more than the feeder leaves, so the CPU share gets 1
    // Several chunks, their kernels on two queues taking turns or on one.
    o.kernel_params = {
        {"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8}, {"QUEUES", threads == 1 ? 2 : 1}};
    t.run(o, &r);
    t.check("discrete hybrid, threads " + std::to_string(threads));
    ASSERT_EQ(r.strategy, Strategy::Hybrid);
    EXPECT_GT(r.gpu_rows, 0);
    EXPECT_GT(r.cpu_rows, 0);
    // The CPU share yields cores to the feeder, never the other way round.
    const int cores = detail::topology::physical_cores();
    EXPECT_GE(r.feeder_threads, 1);
    EXPECT_EQ(r.cpu_threads, std::min(threads, std::max(1, cores - r.feeder_threads)));
    ASSERT_EQ(r.devices.size(), 1u);
    EXPECT_EQ(r.devices[0].feeder_threads, r.feeder_threads);
    ASSERT_GT(r.t_flush, 0);
    EXPECT_LE(r.t_flush, r.t_cpu_start);
    EXPECT_LE(r.t_cpu_start, r.t_cpu_end);
    EXPECT_LE(r.t_cpu_end, r.t_end);
    EXPECT_LE(r.t_gpu_done, r.t_end);
    EXPECT_GT(r.gpu_kernel_seconds, 0.0);
    // The time the device ran any of the kernels, which fits inside the call.
    EXPECT_LE(r.gpu_kernel_seconds, static_cast<double>(r.t_end - r.t_start) * 1e-9);
  }
}

// A * A^T with one pointer for both operands: two USE_HOST_PTR buffers over the same memory
// would be undefined in OpenCL, so the second operand is copied.
TEST(Executor, SameMemoryForAAndB) {
  const int64_t m = 130, k = 70;
  std::vector<float, Allocator<float>> a(static_cast<size_t>(m * k)),
      c(static_cast<size_t>(m * m), 0.0f);
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> d(-1, 1);
  for (auto& x : a) x = static_cast<float>(d(rng));
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = {{"A_T", -1}, {"B_T", -1}};  // both as stored: only the overlap forces a copy
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::Trans, m, m, k, 1.0f, a.data(), k, a.data(), k,
              0.0f, c.data(), m, o, &r);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += double(a[i * k + p]) * double(a[j * k + p]);
      ASSERT_NEAR(c[i * m + j], s, 1e-4) << i << "," << j;
    }
  // In place where the device shares memory (PoCL here); a discrete GPU copies both anyway.
  if (default_device_is_unified()) {
    EXPECT_EQ(r.a, Report::Buffer::ZeroCopy);
  }
  EXPECT_EQ(r.b, Report::Buffer::Copy);
}

// The program's own OpenBLAS thread count, even one it changes between tandem calls, is what
// it finds after each call.
TEST(Executor, ProgramThreadCountSurvivesCalls) {
  openblas_set_num_threads(2);
  Case<double> t(120, 80, 60, 7);
  t.run(hybrid(0.5));  // CPU share with one core left to the GPU feeder
  EXPECT_EQ(openblas_get_num_threads(), 2);
  openblas_set_num_threads(1);
  Options o;
  o.strategy = Strategy::Cpu;
  o.cpu_threads = 2;
  t.run(o);
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

TEST(Executor, ConcurrentCallsFromEightThreads) {
  // Each thread checks its own results (GoogleTest's assertions are thread-safe here).
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      for (int rep = 0; rep < 3; ++rep) {
        const int64_t m = 97 + 13 * t, n = 61 + 7 * rep, k = 45 + t;
        const Options o = hybrid(0.2 * ((t + rep) % 4 + 1));
        const std::string what = "thread " + std::to_string(t) + " rep " + std::to_string(rep);
        if (t % 2 == 0)
          run_checked<float>(m, n, k, static_cast<uint64_t>(100 + t * 10 + rep), o, what,
                             t % 3 == 0 ? 1 : 0);
        else
          run_checked<double>(m, n, k, static_cast<uint64_t>(200 + t * 10 + rep), o, what);
      }
    });
  for (auto& th : threads) th.join();
}

// The discrete path's staging is pooled and reused across calls: eight threads at once, sizes
// that fit and outgrow one another's buffers.
TEST(Executor, ConcurrentCallsShareTheStagingPool) {
  detail::seams::Override seams(test::discrete());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      for (int rep = 0; rep < 4; ++rep) {
        const int64_t m = 60 + 41 * ((t + rep) % 5), n = 50 + 17 * rep, k = 33 + 9 * t;
        const std::string what =
            "discrete thread " + std::to_string(t) + " rep " + std::to_string(rep);
        Options o = hybrid(0.5);
        if (rep % 2) o.strategy = Strategy::Gpu;
        if (t % 2 == 0)
          run_checked<float>(m, n, k, static_cast<uint64_t>(300 + t * 10 + rep), o, what);
        else
          run_checked<double>(m, n, k, static_cast<uint64_t>(400 + t * 10 + rep), o, what);
      }
    });
  for (auto& th : threads) th.join();
}

TEST(Executor, GpuRowsRounding) {
  EXPECT_EQ(detail::gpu_rows(0.0, 1000, 64), 0);
  EXPECT_EQ(detail::gpu_rows(1.0, 1000, 64), 1000);
  EXPECT_EQ(detail::gpu_rows(0.5, 1000, 64), 512);  // 500 -> nearest multiple of 64
  EXPECT_EQ(detail::gpu_rows(0.3, 7, 64), 2);       // too small to round: round(2.1)
  EXPECT_EQ(detail::gpu_rows(0.99, 100, 64), 99);   // rounding would leave the CPU nothing
  EXPECT_EQ(detail::gpu_rows(0.01, 10, 64), 0);
}

TEST(Executor, CpuModesAgree) {
  for (auto mode : {detail::seams::CpuMode::SingleCall, detail::seams::CpuMode::Panels}) {
    detail::seams::Values v;
    v.cpu_mode = mode;
    detail::seams::Override seams(v);
    Case<double> t(211, 67, 33, 5);
    Options o;
    o.strategy = Strategy::Cpu;
    o.cpu_threads = 2;
    t.run(o);
    t.check(mode == detail::seams::CpuMode::Panels ? "panels" : "single call");
  }
}

// Each fallback test runs in its own process under ctest, so "one warning per process" is
// checked from a clean start.
TEST(Fallback, NoMatchingDeviceFallsBackOnceWithOneWarning) {
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    Case<float> t(70, 50, 30, static_cast<uint64_t>(10 + i));
    Options o = hybrid(0.5);
    o.device = "no-such-device";
    Report r;
    t.run(o, &r);
    t.check("fallback");
    EXPECT_TRUE(r.fell_back);
    EXPECT_EQ(r.gpu_rows, 0);
    EXPECT_NE(r.fallback_reason.find("no-such-device"), std::string::npos) << r.fallback_reason;
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  size_t count = 0;
  for (size_t p = err.find("warning:"); p != std::string::npos; p = err.find("warning:", p + 1))
    ++count;
  EXPECT_EQ(count, 1u) << err;
}

TEST(Fallback, GpuStrategyReportsTheCauseAndLeavesCUntouched) {
  Case<float> t(70, 50, 30, 20);
  const auto before = t.c;
  Options o;
  o.strategy = Strategy::Gpu;
  o.device = "no-such-device";
  try {
    t.run(o);
    FAIL() << "expected tandem::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matches no OpenCL device"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(t.c, before);
}

// A kernel the compiler refuses (the seam fail_builds puts an #error in its source, as a driver's
// compiler error would stop it).
TEST(Fallback, BrokenKernelBuildFallsBackUnderHybrid) {
  detail::seams::Values broken;
  broken.fail_builds = true;
  detail::seams::Override seams(broken);
  Case<double> t(90, 40, 20, 30);
  Options o = hybrid(0.5);
  o.kernel_params = {{"MWG", 32}, {"MDIMC", 8}};
  Report r;
  t.run(o, &r);
  t.check("broken kernel, hybrid");
  EXPECT_TRUE(r.fell_back);
  EXPECT_NE(r.fallback_reason.find("clBuildProgram"), std::string::npos) << r.fallback_reason;
}

// A gpu call with these kernel parameters must throw, leaving C as it was; the error it threw.
Error gpu_call_error(uint64_t seed, const std::map<std::string, int>& kernel) {
  Case<double> t(90, 40, 20, seed);
  const auto before = t.c;
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = kernel;
  try {
    t.run(o);
  } catch (const Error& e) {
    EXPECT_EQ(t.c, before);
    return e;
  }
  ADD_FAILURE() << "expected tandem::Error";
  return Error(Error::Kind::Runtime, "none");
}

TEST(Fallback, BrokenKernelBuildIsAnErrorUnderGpu) {
  detail::seams::Values broken;
  broken.fail_builds = true;
  detail::seams::Override seams(broken);
  const Error e = gpu_call_error(31, {{"MWG", 32}, {"MDIMC", 8}});
  EXPECT_EQ(e.kind(), Error::Kind::OpenCL);
  EXPECT_EQ(e.cl_call(), "clBuildProgram");
  EXPECT_NE(std::string(e.what()).find("MWG 32"), std::string::npos) << e.what();
}

// A set the kernel's own #error checks would refuse never reaches the compiler: gpu::check names
// the rule, C is untouched under gpu, and hybrid falls back with that reason.
TEST(Fallback, InvalidKernelIsRefusedBeforeItsBuild) {
  const std::map<std::string, int> invalid{{"MWG", 30}, {"MDIMC", 8}};
  const Error e = gpu_call_error(32, invalid);
  EXPECT_EQ(e.kind(), Error::Kind::Runtime);
  EXPECT_NE(std::string(e.what()).find("MWG must be a multiple of MDIMC"), std::string::npos)
      << e.what();
  Case<double> t(90, 40, 20, 33);
  Report r;
  Options h = hybrid(0.5);
  h.kernel_params = invalid;
  t.run(h, &r);
  t.check("invalid kernel, hybrid");
  EXPECT_TRUE(r.fell_back);
  EXPECT_NE(r.fallback_reason.find("MWG must be a multiple of MDIMC"), std::string::npos)
      << r.fallback_reason;
}

TEST(Fallback, ParametersOverTheDeviceLimitsFallBack) {
  Case<float> t(64, 64, 64, 40);
  Options o = hybrid(0.5);
  o.kernel_params = {{"MDIMC", 1 << 12}, {"NDIMC", 1 << 12}, {"MWG", 1 << 12}, {"NWG", 1 << 12}};
  Report r;
  t.run(o, &r);
  t.check("oversized work-group");
  EXPECT_TRUE(r.fell_back);
  EXPECT_NE(r.fallback_reason.find("work-group"), std::string::npos) << r.fallback_reason;
}

// B spans more than PoCL's largest allocation (1 GiB) through its leading dimension, so the
// zero-copy clCreateBuffer fails for real. Only the touched rows use physical memory.
TEST(Fallback, BufferTooLargeForTheDeviceFallsBackUnderHybrid) {
  const auto& di = detail::gpu::info(*detail::gpu::open_device(""));
  ASSERT_TRUE(di.unified_memory);
  const int64_t m = 64, n = 4, k = 3;
  const int64_t ldb = static_cast<int64_t>(di.max_alloc_bytes / sizeof(float) / 2 + 64);
  float* b = static_cast<float*>(tandem_malloc(static_cast<size_t>(k * ldb) * sizeof(float)));
  ASSERT_NE(b, nullptr);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) b[p * ldb + j] = static_cast<float>(p + 1);
  std::vector<float, Allocator<float>> a(static_cast<size_t>(m * k), 1.0f),
      c(static_cast<size_t>(m * n), 0.0f);
  Report r;
  Options h = hybrid(0.5);
  h.kernel_params = {{"A_T", -1}, {"B_T", -1}};  // B read in place, not copied by a codelet
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b, ldb, 0.0f,
              c.data(), n, h, &r);
  for (float x : c) EXPECT_EQ(x, 6.0f);  // 1 + 2 + 3
  EXPECT_TRUE(r.fell_back);
  EXPECT_NE(r.fallback_reason.find("clCreateBuffer"), std::string::npos) << r.fallback_reason;
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = h.kernel_params;
  try {
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b, ldb,
                0.0f, c.data(), n, o);
    ADD_FAILURE() << "expected tandem::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::OpenCL);
    EXPECT_EQ(e.cl_call(), "clCreateBuffer");
    // The sizes, beside OpenCL's status (which alone named no cause).
    const std::string what = e.what(), b_bytes = std::to_string(((k - 1) * ldb + n) * 4);
    EXPECT_NE(what.find(", " + b_bytes + " and "), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(di.max_alloc_bytes) + " bytes per buffer"),
              std::string::npos)
        << what;
  }
  tandem_free(b);
}

TEST(Fallback, UnknownKernelParameterIsAnInvalidArgument) {
  Case<float> t(16, 16, 16, 50);
  Options o = hybrid(0.5);
  o.kernel_params = {{"NOPE", 1}};
  EXPECT_THROW(t.run(o), Error);
}

}  // namespace
}  // namespace tandem::test
