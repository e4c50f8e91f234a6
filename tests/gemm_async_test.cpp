// KERNEL 1's asynchronous copies (kernels/gemm.cl, CA: tiles copied from global to local memory
// by cp.async, CA - 1 tiles ahead) and the probe that offers them (src/gpu/engine.cpp), on this
// machine's PoCL, which has no cp.async:
// - with the seam emulate_engine, the pipeline's indexing and buffer order (the prologue's tiles,
//   pipelines deeper than K's steps, buffers reused in turn, edge tiles copied at once beside whole
//   ones; the emulated copies are synchronous, so the group counting of commit and wait is checked
//   only on the instruction, on the GPU host) against a
//   double-precision reference on random inputs: awkward sizes, padded leading dimensions, both
//   storage orders and every transpose (and conjugation), alpha and beta in {0, 1, other} with
//   NaN in C where beta is 0, on a unified device in place and misaligned, and on a discrete one
//   (played by PoCL) from ordinary and pinned memory, with 2, 3 and 4 buffers, in s, d, c and z;
// - without it, what a device without cp.async does: the probe says no, also when made to build
//   its kernel; explicit parameters asking for CA are refused with the reason, C untouched; a
//   profile asking for it gets one warning and its own tiles through registers (DB), C right.
// On the GPU host the same sets run on the instruction itself (bench/engine_host.sh).
#include <gtest/gtest.h>

#include <complex>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/engine.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/device_profile.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "profile_here.hpp"
#include "reference.hpp"
#include "seam_values.hpp"
#include "tandem/tandem.hpp"

namespace tandem::test {
namespace {

namespace prof = detail::profile;
namespace gpu = detail::gpu;
using detail::Precision;

struct ParamSet {
  const char* name;
  std::map<std::string, int> kernel;  // over the defaults; VW is the precision's 16 bytes
  bool emulated;                      // also run emulated here (small enough for PoCL)
};

// KERNEL 1 reading A transposed and B as stored, as CA needs; VW is set per precision.
std::map<std::string, int> async_set(std::map<std::string, int> tiles) {
  tiles.insert({{"KERNEL", 1}, {"A_T", 1}, {"B_T", 0}, {"DB", 0}});
  return tiles;
}

// Small tiles keep PoCL quick; between them 2, 3 and 4 buffers, a K step of 4, 8 and 16 (so the
// test sizes' K spans fewer steps than the pipeline is deep, as many, and more), vectors of rows
// and columns of 1, 2 and 4.
const ParamSet kSets[] = {
    {"two_buffers",
     async_set({{"MWG", 16},
                {"NWG", 16},
                {"KWG", 8},
                {"MDIMC", 4},
                {"NDIMC", 4},
                {"VWM", 2},
                {"VWN", 2},
                {"CA", 2}}),
     true},
    {"three_buffers",
     async_set({{"MWG", 32},
                {"NWG", 32},
                {"KWG", 4},
                {"MDIMC", 8},
                {"NDIMC", 4},
                {"VWM", 1},
                {"VWN", 4},
                {"CA", 3}}),
     true},
    {"four_buffers",
     async_set({{"MWG", 16},
                {"NWG", 32},
                {"KWG", 16},
                {"MDIMC", 4},
                {"NDIMC", 8},
                {"VWM", 4},
                {"VWN", 1},
                {"CA", 4}}),
     true},
    // The H100 entry's sgemm and cgemm kernels (database/nvidia-h100.json's s 8192 and c 4096
    // buckets) and a three-buffer 128x256: on the instruction only.
    {"h100_sgemm",
     async_set({{"MWG", 128},
                {"NWG", 256},
                {"KWG", 16},
                {"MDIMC", 16},
                {"NDIMC", 16},
                {"VWM", 4},
                {"VWN", 4},
                {"KUNROLL", 16},
                {"CA", 2}}),
     false},
    {"h100_cgemm",
     async_set({{"MWG", 128},
                {"NWG", 64},
                {"KWG", 16},
                {"MDIMC", 8},
                {"NDIMC", 32},
                {"VWM", 2},
                {"VWN", 2},
                {"KUNROLL", 8},
                {"CA", 2}}),
     false},
    {"three_buffers_large",
     async_set({{"MWG", 128},
                {"NWG", 256},
                {"KWG", 8},
                {"MDIMC", 16},
                {"NDIMC", 16},
                {"VWM", 4},
                {"VWN", 4},
                {"KUNROLL", 8},
                {"CA", 3}}),
     false},
};
constexpr int kSetCount = static_cast<int>(sizeof(kSets) / sizeof(kSets[0]));

const std::vector<Extents> kSizes = {{1, 1, 1},    {3, 7, 2},   {17, 33, 9}, {33, 17, 31},
                                     {40, 24, 16}, {65, 9, 13}, {32, 64, 70}};
const std::vector<Extents> kLargeSizes = {{257, 129, 300}, {256, 512, 256}, {130, 260, 33}};

// The set's parameters for elements of `precision`: VW makes a 16-byte vector.
std::map<std::string, int> params_for(const ParamSet& set, Precision precision) {
  auto p = set.kernel;
  p["VW"] = static_cast<int>(16 / detail::element_bytes(precision));
  return p;
}

template <class T>
void run_set(const ParamSet& set, bool emulate) {
  uint64_t seed = 11;
  int combo = 0;
  std::vector<Extents> sizes = kSizes;
  if (!emulate) sizes.insert(sizes.end(), kLargeSizes.begin(), kLargeSizes.end());
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = params_for(set, detail::precision_of<T>());
  const std::string ca = "CA=" + std::to_string(o.kernel_params.at("CA"));
  for (const SharePath& path : kSharePaths) {
    detail::seams::Values v = path.seams();
    v.emulate_engine = emulate;
    detail::seams::Override scope(v);
    walk_calls<T>(
        sizes, seed, combo,
        [&](Layout layout, Op op_a, Op op_b, const Extents& size, std::complex<double> alpha,
            std::complex<double> beta, int64_t pad, uint64_t call_seed) {
          std::string what;
          const Report r =
              checked_call<T>(std::string(set.name) + " " + path.name, layout, op_a, op_b, size.m,
                              size.n, size.k, alpha, beta, pad, path.offset, call_seed, o, what);
          EXPECT_FALSE(r.fell_back) << what << ": " << r.fallback_reason;
          if (alpha != 0.0) {
            EXPECT_NE(r.kernel.find(ca), std::string::npos) << what << ": " << r.kernel;
          }
        });
  }
}

using SetPrecision = std::tuple<int, Precision>;
std::vector<SetPrecision> set_precisions(bool emulated) {
  std::vector<SetPrecision> out;
  for (int i = 0; i < kSetCount; ++i)
    if (!emulated || kSets[i].emulated)
      for (Precision p : {Precision::s, Precision::d, Precision::c, Precision::z})
        out.emplace_back(i, p);
  return out;
}

std::string set_name(const ::testing::TestParamInfo<SetPrecision>& p) {
  return std::string(kSets[std::get<0>(p.param)].name) + "_" + detail::letter(std::get<1>(p.param));
}

class AsyncKernel : public ::testing::TestWithParam<SetPrecision> {
 protected:
  void run(bool emulate) const {
    const ParamSet& set = kSets[std::get<0>(GetParam())];
    const Precision precision = std::get<1>(GetParam());
    const gpu::DeviceInfo& info = gpu::info(*gpu::open_device(""));
    if (!info.fp64 && (precision == Precision::d || precision == Precision::z))
      GTEST_SKIP() << "no fp64";
    // Tiles of this element that do not fit the device's local memory are not its to run.
    const uint64_t local =
        gpu::local_bytes(gpu::with_defaults(gpu::limits_of(info), params_for(set, precision)),
                         detail::element_bytes(precision));
    if (local > info.local_mem_bytes)
      GTEST_SKIP() << local << " bytes of local memory; the device has " << info.local_mem_bytes;
    switch (precision) {
      case Precision::s:
        return run_set<float>(set, emulate);
      case Precision::d:
        return run_set<double>(set, emulate);
      case Precision::c:
        return run_set<std::complex<float>>(set, emulate);
      default:
        return run_set<std::complex<double>>(set, emulate);
    }
  }
};
class EmulatedAsyncKernel : public AsyncKernel {};

TEST_P(EmulatedAsyncKernel, MatchesReference) { run(true); }

// Where this device's probe proved cp.async (on the GPU host).
TEST_P(AsyncKernel, OnTheInstructionMatchesReference) {
  const gpu::EngineVerdict& verdict = gpu::engine_verdict(*gpu::open_device(""));
  if ((verdict.shapes & gpu::kAsyncCopy) == 0) GTEST_SKIP() << "no cp.async here: " << verdict.why;
  run(false);
}

INSTANTIATE_TEST_SUITE_P(Sets, EmulatedAsyncKernel, ::testing::ValuesIn(set_precisions(true)),
                         set_name);
INSTANTIATE_TEST_SUITE_P(Sets, AsyncKernel, ::testing::ValuesIn(set_precisions(false)), set_name);

// ---- the rules, and a device without cp.async -------------------------------------------------

TEST(AsyncCopy, TheRulesNameWhatCANeeds) {
  gpu::Limits limits;
  limits.engine = gpu::kAsyncCopy;
  limits.local_mem_bytes = 1 << 20;
  const auto violation = [&](std::map<std::string, int> overrides, Precision precision) {
    const auto v = gpu::check(gpu::with_defaults(limits, overrides), limits, precision);
    return v ? v->message : std::string();
  };
  const auto ok = params_for(kSets[0], Precision::s);
  EXPECT_EQ(violation(ok, Precision::s), "");
  auto caller_layout = ok;
  caller_layout["A_T"] = -1;
  EXPECT_NE(violation(caller_layout, Precision::s).find("A_T 1, B_T 0"), std::string::npos);
  auto buffered = ok;
  buffered["DB"] = 1;
  EXPECT_NE(violation(buffered, Precision::s).find("DB 0"), std::string::npos);
  auto five = ok;
  five["CA"] = 5;
  EXPECT_NE(violation(five, Precision::s).find("CA must be 0, 2, 3 or 4"), std::string::npos);
  EXPECT_NE(violation(ok, Precision::d).find("16 bytes"), std::string::npos);  // VW 4 of double
  auto general = ok;
  general["KERNEL"] = 0;
  EXPECT_NE(violation(general, Precision::s).find("KERNEL 1's"), std::string::npos);
  // Copies asked for on a device whose probe did not prove them: the device's rule.
  limits.engine = 0;
  const auto v = gpu::check(gpu::with_defaults(limits, ok), limits, Precision::s);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind, gpu::Violation::Kind::Device);
  EXPECT_NE(v->message.find("cp.async"), std::string::npos) << v->message;
}

// CA's buffers are its local memory, and no tile passes through registers.
TEST(AsyncCopy, LocalAndPrivateMemoryCountTheBuffers) {
  const gpu::Limits limits;
  auto p = gpu::with_defaults(limits, params_for(kSets[2], Precision::s));
  EXPECT_EQ(gpu::local_bytes(p, 4), uint64_t{4 * 16 * (16 + 32) * 4});
  const uint64_t without_staging = gpu::private_bytes(p, 4);
  p["CA"] = 0;
  EXPECT_EQ(gpu::local_bytes(p, 4), uint64_t{4 * 16 * (16 + 32)});
  EXPECT_GT(gpu::private_bytes(p, 4), without_staging);
}

// Skips a test of a device without cp.async where this one has it (the GPU host), saying so.
#define SKIP_WHERE_CP_ASYNC_RUNS()                                                               \
  do {                                                                                           \
    const gpu::EngineVerdict& here = gpu::engine_verdict(*gpu::open_device(""));                 \
    if (here.shapes & gpu::kAsyncCopy) GTEST_SKIP() << "this device has cp.async: " << here.why; \
  } while (0)

TEST(AsyncCopy, TheProbeSaysNoHere) {
  SKIP_WHERE_CP_ASYNC_RUNS();
  auto device = gpu::open_device("");
  EXPECT_EQ(gpu::engine_verdict(*device).shapes & gpu::kAsyncCopy, 0);
  EXPECT_EQ(gpu::limits_for(*device, params_for(kSets[0], Precision::s)).engine, 0);
}

// Made to build and run the probe kernel anyway, PoCL's compiler refuses the inline PTX.
TEST(AsyncCopy, ABuildThatFailsSaysNo) {
  SKIP_WHERE_CP_ASYNC_RUNS();
  detail::seams::Values v;
  v.probe_any = true;
  detail::seams::Override scope(v);
  const gpu::EngineVerdict& verdict = gpu::engine_verdict(*gpu::open_device(""));
  EXPECT_EQ(verdict.shapes & gpu::kAsyncCopy, 0) << verdict.why;
  EXPECT_NE(verdict.why.find("cp.async: the build failed"), std::string::npos) << verdict.why;
}

TEST(AsyncCopy, ExplicitParametersAreRefusedAndCIsUntouched) {
  SKIP_WHERE_CP_ASYNC_RUNS();
  std::vector<float> a(256, 1.0f), b(256, 2.0f), c(256, 5.0f);
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = params_for(kSets[0], Precision::s);
  try {
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 16, 16, 16, 1.0f, a.data(), 16,
                b.data(), 16, 0.0f, c.data(), 16, o);
    ADD_FAILURE() << "asynchronous copies ran on a device whose probe said no";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cp.async"), std::string::npos) << e.what();
  }
  for (float x : c) EXPECT_EQ(x, 5.0f);
}

TEST(AsyncCopy, AProfileAskingForItWarnsOnceAndRunsItsTilesWithoutThem) {
  SKIP_WHERE_CP_ASYNC_RUNS();
  save_profile_here(TANDEM_VERSION, Precision::s, params_for(kSets[0], Precision::s));
  ::testing::internal::CaptureStderr();
  for (int call = 0; call < 3; ++call) {
    const int64_t n = 40 + call;
    std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n, 3.0f);
    Options o;
    o.strategy = Strategy::Gpu;
    Report r;
    gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n, o, &r);
    for (float x : c) ASSERT_EQ(x, 0.5f * static_cast<float>(n));
    EXPECT_EQ(r.kernel.find("CA=2"), std::string::npos) << r.kernel;
    EXPECT_NE(r.kernel.find("CA=0"), std::string::npos) << r.kernel;
    EXPECT_NE(r.kernel.find("DB=1"), std::string::npos) << r.kernel;
    EXPECT_NE(r.kernel.find("MWG=16"), std::string::npos) << r.kernel;
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  const size_t first = err.find("cp.async");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("does not fit", err.find("does not fit") + 1), std::string::npos)
      << "warned twice: " << err;
  EXPECT_NE(err.find("its probe: no matrix engine or asynchronous copy"), std::string::npos) << err;
  EXPECT_NE(err.find("its tiles without asynchronous copies"), std::string::npos) << err;
  prof::forget();
}

}  // namespace
}  // namespace tandem::test
