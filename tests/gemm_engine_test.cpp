// The matrix-engine codelet (kernels/gemm_engine.cl, KERNEL 3) and the probe that offers it
// (src/gpu/engine.cpp), on this machine's PoCL, which has no matrix instructions:
// - with the seam emulate_engine, the codelet's indexing (tiles, warps, fragments in the
//   instruction's layout, edges, both read layouts of each operand, double buffering) against a
//   double-precision reference on random inputs: awkward sizes, padded leading dimensions, both
//   storage orders and every transpose, alpha and beta in {0, 1, other} with NaN in C where beta
//   is 0, on a unified device in place and misaligned, and on a discrete one (played by PoCL)
//   from ordinary and pinned memory, for both instruction shapes, in dgemm and in zgemm (every
//   conjugation of each operand too);
// - without it, what a device without the engine does: the probe says no (and why), even when
//   made to build the probe kernel; explicit parameters naming the codelet are refused with the
//   reason, C untouched; a profile naming it gets one warning and the default kernel, C right.
// On the GPU host the same codelet runs on the instruction itself (bench/engine_host.sh).
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

struct ParamSet {
  const char* name;
  std::map<std::string, int> kernel;  // over the codelet's defaults
  bool emulated;                      // also run emulated here (small enough for PoCL)
};

// Small tiles keep the emulation's barriers affordable on PoCL; between them they cover both
// instruction shapes, warps along M and along N, one and several instruction tiles per warp,
// a K step of 4 and of 8, vectors of 1 and 2 with and without padding, with and without double
// buffering, k in fours and in neighbouring pairs (KP).
const ParamSet kSets[] = {
    {"m16_two_warps_db",
     {{"KERNEL", 3},
      {"MWG", 32},
      {"NWG", 16},
      {"KWG", 8},
      {"MDIMC", 8},
      {"NDIMC", 8},
      {"WM", 2},
      {"MMA_M", 16},
      {"VW", 2},
      {"PADA", 2},
      {"PADB", 0},
      {"DB", 1},
      {"KP", 0}},
     true},
    {"m8_warps_along_n",
     {{"KERNEL", 3},
      {"MWG", 16},
      {"NWG", 32},
      {"KWG", 4},
      {"MDIMC", 4},
      {"NDIMC", 16},
      {"WM", 1},
      {"MMA_M", 8},
      {"VW", 1},
      {"PADA", 0},
      {"PADB", 2},
      {"DB", 0}},
     true},
    {"m16_one_warp",
     {{"KERNEL", 3},
      {"MWG", 16},
      {"NWG", 16},
      {"KWG", 4},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"WM", 1},
      {"MMA_M", 16},
      {"VW", 2},
      {"PADA", 4},
      {"PADB", 4},
      {"DB", 1}},
     true},
    {"m8_pairs_of_k",
     {{"KERNEL", 3},
      {"MWG", 16},
      {"NWG", 16},
      {"KWG", 8},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"WM", 1},
      {"MMA_M", 8},
      {"VW", 1},
      {"PADA", 2},
      {"PADB", 0},
      {"DB", 0},
      {"KP", 1}},
     true},
    // The defaults (database/defaults.json's "engine"), them on the older shape, and the H100's
    // tuned shapes: on the instruction only.
    {"defaults", {{"KERNEL", 3}}, false},
    {"defaults_m8", {{"KERNEL", 3}, {"MMA_M", 8}}, false},
    {"defaults_narrow", {{"KERNEL", 3}, {"NWG", 64}}, false},
    {"four_warps_pairs_of_k",
     {{"KERNEL", 3}, {"MWG", 64}, {"MDIMC", 8}, {"WM", 1}, {"KP", 1}, {"PADA", 0}, {"PADB", 2}},
     false},
};
constexpr int kSetCount = static_cast<int>(sizeof(kSets) / sizeof(kSets[0]));

const std::vector<Extents> kSizes = {{1, 1, 1},    {3, 7, 2},    {17, 33, 9},
                                     {33, 17, 31}, {40, 24, 16}, {65, 9, 13}};
// On the instruction, also sizes past the defaults' 128 x 128 tile: whole interior tiles (the
// unchecked loads) beside edge ones.
const std::vector<Extents> kLargeSizes = {{257, 129, 300}, {256, 384, 256}, {130, 260, 33}};

template <class T>
void run_call(const ParamSet& set, const SharePath& path, Layout layout, Op op_a, Op op_b,
              const Extents& size, std::complex<double> alpha, std::complex<double> beta,
              int64_t pad, uint64_t seed) {
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = set.kernel;
  std::string what;
  const Report r =
      checked_call<T>(std::string(set.name) + " " + path.name, layout, op_a, op_b, size.m, size.n,
                      size.k, alpha, beta, pad, path.offset, seed, o, what);
  EXPECT_FALSE(r.fell_back) << what << ": " << r.fallback_reason;
  if (alpha != 0.0) {
    EXPECT_NE(r.kernel.find("KERNEL=3"), std::string::npos) << what;
  }
}

template <class T>
void run_set(const ParamSet& set, bool emulate) {
  uint64_t seed = 7;
  int combo = 0;
  std::vector<Extents> sizes = kSizes;
  if (!emulate) sizes.insert(sizes.end(), kLargeSizes.begin(), kLargeSizes.end());
  for (const SharePath& path : kSharePaths) {
    detail::seams::Values v = path.seams();
    v.emulate_engine = emulate;
    detail::seams::Override scope(v);
    walk_calls<T>(sizes, seed, combo, [&](auto... call) { run_call<T>(set, path, call...); });
  }
}

// The (set, precision) pairs there are: dgemm for every set, zgemm where the set has no KP
// (pairs of k are for real elements); only the sets small enough to emulate, where `emulated`.
using SetPrecision = std::tuple<int, detail::Precision>;
std::vector<SetPrecision> set_precisions(bool emulated) {
  std::vector<SetPrecision> out;
  for (int i = 0; i < kSetCount; ++i) {
    if (emulated && !kSets[i].emulated) continue;
    out.emplace_back(i, detail::Precision::d);
    const auto kp = kSets[i].kernel.find("KP");
    if (kp == kSets[i].kernel.end() || kp->second == 0) out.emplace_back(i, detail::Precision::z);
  }
  return out;
}

std::string set_name(const ::testing::TestParamInfo<SetPrecision>& p) {
  return std::string(kSets[std::get<0>(p.param)].name) + "_" + detail::letter(std::get<1>(p.param));
}

class EngineKernel : public ::testing::TestWithParam<SetPrecision> {
 protected:
  const ParamSet& set() const { return kSets[std::get<0>(GetParam())]; }
  void run(bool emulate) const {
    const detail::Precision precision = std::get<1>(GetParam());
    // A set whose tiles of this element do not fit the device's local memory is not this
    // device's to run (the H100's 48 KiB holds the defaults' tiles of doubles, not of complex).
    const gpu::DeviceInfo& info = gpu::info(*gpu::open_device(""));
    const uint64_t local = gpu::local_bytes(gpu::with_defaults(gpu::limits_of(info), set().kernel),
                                            detail::element_bytes(precision));
    if (local > info.local_mem_bytes)
      GTEST_SKIP() << local << " bytes of local memory; the device has " << info.local_mem_bytes;
    if (precision == detail::Precision::z)
      run_set<std::complex<double>>(set(), emulate);
    else
      run_set<double>(set(), emulate);
  }
};
class EmulatedEngineKernel : public EngineKernel {};

TEST_P(EmulatedEngineKernel, MatchesReference) {
  if (!gpu::info(*gpu::open_device("")).fp64) GTEST_SKIP() << "no fp64";
  run(true);
}

// Where this device's probe proved the set's instruction (on the GPU host).
TEST_P(EngineKernel, OnTheInstructionMatchesReference) {
  auto device = gpu::open_device("");
  const gpu::EngineVerdict& verdict = gpu::engine_verdict(*device);
  const auto rows = set().kernel.find("MMA_M");
  const int shape = gpu::engine_shape(rows == set().kernel.end() ? 16 : rows->second);
  if ((verdict.shapes & shape) == 0) GTEST_SKIP() << "no such instruction here: " << verdict.why;
  run(false);
}

INSTANTIATE_TEST_SUITE_P(Sets, EmulatedEngineKernel, ::testing::ValuesIn(set_precisions(true)),
                         set_name);
INSTANTIATE_TEST_SUITE_P(Sets, EngineKernel, ::testing::ValuesIn(set_precisions(false)), set_name);

// ---- a device without the engine ----------------------------------------------------------------

// Skips a test of a device without the engine where this one has it (the GPU host), saying so.
#define SKIP_WHERE_THE_ENGINE_RUNS()                                                  \
  do {                                                                                \
    const gpu::EngineVerdict& here = gpu::engine_verdict(*gpu::open_device(""));      \
    if (here.shapes != 0) GTEST_SKIP() << "this device has the engine: " << here.why; \
  } while (0)

TEST(EngineProbe, SaysNoHereAndWhy) {
  SKIP_WHERE_THE_ENGINE_RUNS();
  auto device = gpu::open_device("");
  const gpu::EngineVerdict& v = gpu::engine_verdict(*device);
  EXPECT_EQ(v.shapes, 0) << v.why;
  EXPECT_NE(v.why.find("no matrix engine"), std::string::npos) << v.why;
  EXPECT_EQ(gpu::limits_for(*device, {{"KERNEL", 3}}).engine, 0);
}

// Made to build and run the probe kernel anyway, PoCL's compiler refuses the inline PTX: no.
TEST(EngineProbe, ABuildThatFailsSaysNo) {
  SKIP_WHERE_THE_ENGINE_RUNS();
  detail::seams::Values v;
  v.probe_any = true;
  detail::seams::Override scope(v);
  const gpu::EngineVerdict& verdict = gpu::engine_verdict(*gpu::open_device(""));
  EXPECT_EQ(verdict.shapes, 0) << verdict.why;
  EXPECT_NE(verdict.why.find("m8n8k4: the build failed"), std::string::npos) << verdict.why;
  EXPECT_NE(verdict.why.find("m16n8k4: the build failed"), std::string::npos) << verdict.why;
}

// The probe's expected result is the fragment layout the codelet uses: the probe run on the
// emulated instruction (itself checked against the reference above) passes for both shapes.
TEST(EngineProbe, TheEmulatedInstructionPassesIt) {
  if (!gpu::info(*gpu::open_device("")).fp64) GTEST_SKIP() << "no fp64";
  detail::seams::Values v;
  v.probe_any = true;
  v.emulate_engine = true;
  detail::seams::Override scope(v);
  const gpu::EngineVerdict& verdict = gpu::engine_verdict(*gpu::open_device(""));
  EXPECT_EQ(verdict.shapes, gpu::engine_shape(8) | gpu::engine_shape(16) | gpu::kAsyncCopy)
      << verdict.why;
  EXPECT_EQ(verdict.why, "m8n8k4 exact; m16n8k4 exact; cp.async exact");
}

TEST(EngineProbe, ExplicitParametersAreRefusedAndCIsUntouched) {
  SKIP_WHERE_THE_ENGINE_RUNS();
  std::vector<double> a(64, 1.0), b(64, 2.0), c(64, 5.0);
  Options o;
  o.strategy = Strategy::Gpu;
  o.kernel_params = {{"KERNEL", 3}};
  try {
    gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, 8, 8, 8, 1.0, a.data(), 8, b.data(), 8,
                 0.0, c.data(), 8, o);
    ADD_FAILURE() << "the codelet ran on a device whose probe said no";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matrix-engine codelet"), std::string::npos) << e.what();
  }
  for (double x : c) EXPECT_EQ(x, 5.0);
}

TEST(EngineProbe, AProfileNamingItWarnsOnceAndRunsTheDefaultKernel) {
  SKIP_WHERE_THE_ENGINE_RUNS();
  save_profile_here(TANDEM_VERSION, detail::Precision::d, {{"KERNEL", 3}});
  ::testing::internal::CaptureStderr();
  for (int call = 0; call < 3; ++call) {
    const int64_t n = 40 + call;
    std::vector<double> a(n * n, 1.0), b(n * n, 0.5), c(n * n, 3.0);
    Options o;
    o.strategy = Strategy::Gpu;
    Report r;
    gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                 0.0, c.data(), n, o, &r);
    for (double x : c) ASSERT_EQ(x, 0.5 * static_cast<double>(n));
    EXPECT_EQ(r.kernel.find("KERNEL=3"), std::string::npos) << r.kernel;
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  const size_t first = err.find("matrix-engine codelet");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("matrix-engine codelet", first + 1), std::string::npos)
      << "warned twice: " << err;
  EXPECT_NE(err.find("its probe: no matrix engine"), std::string::npos) << err;
  prof::forget();
}

}  // namespace
}  // namespace tandem::test
