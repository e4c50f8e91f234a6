// The direct kernel (kernels/gemm_direct.cl, KERNEL 2) against a double-precision reference on
// random inputs: awkward sizes (1, 2, 3, 7, 17, 33, 63, 65, 127, 129; m, n and k all different;
// k = 1), padded leading dimensions, both layouts and every transpose, alpha and beta in {0, 1,
// other} with NaN in C where beta = 0, both precisions, several parameter sets of the tuner's
// space, on every path a share can take it: in place on a unified device, staged there from
// misaligned operands, and on a discrete device (played by PoCL) in chunks from ordinary memory
// and from tandem_malloc's pinned memory. Then which calls run it: below the profile's threshold,
// the defaults' without one, and as Options::direct asks.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/device.hpp"
#include "gpu/gemm_params.hpp"
#include "plan/device_profile.hpp"
#include "profile/choice.hpp"
#include "profile/defaults.hpp"
#include "profile/profile.hpp"
#include "profile/store.hpp"
#include "reference.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

namespace prof = detail::profile;
namespace gpu = detail::gpu;
using detail::Precision;

struct ParamSet {
  const char* name;
  std::vector<Precision> precisions;  // the precisions it is tested in
  std::map<std::string, int> kernel;  // over the direct kernel's defaults
};

// Sets of the direct kernel's space (tuner/gemm_space.cpp's direct_space): the device's
// defaults, the GPU defaults whatever the device, tiles smaller than a vector of work, uneven
// tiles, every vector width and both paddings. Each set's programs take PoCL seconds to build,
// so most sets run in one precision, the two sharing them out.
const ParamSet kSets[] = {
    {"defaults", {Precision::s, Precision::d}, {{"KERNEL", 2}}},
    {"gpu_defaults", {Precision::s}, *prof::direct_defaults(true).kernel},
    {"tiny",
     {Precision::d},
     {{"KERNEL", 2},
      {"MWG", 8},
      {"NWG", 8},
      {"KWG", 16},
      {"MDIMC", 2},
      {"NDIMC", 4},
      {"KUNROLL", 1},
      {"VWA", 8},
      {"VWB", 1},
      {"PADA", 0},
      {"PADB", 1}}},
    {"uneven",
     {Precision::s},
     {{"KERNEL", 2},
      {"MWG", 16},
      {"NWG", 32},
      {"KWG", 8},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"KUNROLL", 2},
      {"VWA", 4},
      {"VWB", 2},
      {"PADA", 1},
      {"PADB", 1}}},
    {"wide",
     {Precision::d},
     {{"KERNEL", 2},
      {"MWG", 32},
      {"NWG", 16},
      {"KWG", 32},
      {"MDIMC", 8},
      {"NDIMC", 2},
      {"KUNROLL", 2},
      {"VWA", 2},
      {"VWB", 8},
      {"PADA", 0},
      {"PADB", 0}}},
};
constexpr int kSetCount = static_cast<int>(sizeof(kSets) / sizeof(kSets[0]));

const std::vector<Extents> kSizes = {{1, 1, 1},     {2, 3, 1},     {3, 7, 2},    {7, 17, 33},
                                     {17, 33, 63},  {33, 65, 17},  {63, 1, 127}, {65, 129, 3},
                                     {127, 63, 65}, {129, 2, 129}, {64, 64, 64}, {130, 66, 34}};

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
    EXPECT_NE(r.kernel.find("KERNEL=2"), std::string::npos) << what << ": " << r.kernel;
    // Nothing is packed: operands reach a discrete device as they are stored, and pinned ones
    // are said to be.
    if (path.discrete) {
      EXPECT_EQ(r.a, path.pinned ? Report::Buffer::Pinned : Report::Buffer::Copy) << what;
    }
  }
}

template <class T>
void run_set(const ParamSet& set) {
  uint64_t seed = 99;
  int combo = 0;
  for (const SharePath& path : kSharePaths) {
    // Every share cut into chunks on the discrete path; pinned blocks however small.
    detail::seams::Override scope(path.seams());
    walk_calls<T>(kSizes, seed, combo, [&](auto... call) { run_call<T>(set, path, call...); });
  }
}

// (set, precision) pairs, as the sets ask.
std::vector<std::tuple<int, Precision>> set_precisions() {
  std::vector<std::tuple<int, Precision>> out;
  for (int i = 0; i < kSetCount; ++i)
    for (Precision precision : kSets[i].precisions) out.emplace_back(i, precision);
  return out;
}

class DirectKernel : public ::testing::TestWithParam<std::tuple<int, Precision>> {};

TEST_P(DirectKernel, MatchesReference) {
  const auto [si, precision] = GetParam();
  if (detail::needs_fp64(precision) && !gpu::info(*gpu::open_device("")).fp64)
    GTEST_SKIP() << "no fp64";
  detail::with_real_type(precision,
                         [&, si = si](auto zero) { run_set<decltype(zero)>(kSets[si]); });
}

INSTANTIATE_TEST_SUITE_P(Sets, DirectKernel, ::testing::ValuesIn(set_precisions()),
                         [](const ::testing::TestParamInfo<std::tuple<int, Precision>>& p) {
                           return std::string(kSets[std::get<0>(p.param)].name) + "_" +
                                  detail::letter(std::get<1>(p.param));
                         });

// ---- which calls run it ----------------------------------------------------------------------

prof::Identity here() { return prof::identity_for(gpu::info(*gpu::open_device(""))); }

// A profile for this device whose sgemm has a direct kernel (an 8 x 16 tile, unlike any default)
// and, if given, a threshold.
void save_profile(std::optional<int64_t> direct_below, bool with_kernel = true) {
  prof::Profile p;
  p.tandem_version = TANDEM_VERSION;
  p.identity = here();
  prof::PrecisionProfile pp;
  pp.gpu_kernel = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 4}, {"NDIMC", 8}};
  pp.gpu_size = 64;
  if (with_kernel) {
    pp.direct_kernel = {{"KERNEL", 2}, {"MWG", 8}, {"NWG", 16}, {"MDIMC", 2}, {"NDIMC", 4}};
    pp.direct_size = 64;
  }
  pp.direct_below = direct_below;
  p.precisions[detail::Precision::s] = pp;
  prof::save(p, prof::path_for(p.identity));
  prof::forget();
}

// The kernel a GPU call of m x n x k ran, with `o`'s choices.
std::string kernel_of(int64_t m, int64_t n, int64_t k, Options o = {}) {
  std::vector<float> a(static_cast<size_t>(m * k), 1.0f), b(static_cast<size_t>(k * n), 0.5f),
      c(static_cast<size_t>(m * n), 0.0f);
  o.strategy = Strategy::Gpu;
  Report r;
  gemm<float>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n,
              0.0f, c.data(), n, o, &r);
  for (float x : c) EXPECT_EQ(x, 0.5f * static_cast<float>(k));
  return r.kernel;
}

bool direct(const std::string& kernel) { return kernel.find("KERNEL=2") != std::string::npos; }

TEST(DirectChoice, BelowTheProfilesThresholdRunsItsDirectKernel) {
  save_profile(40);
  const std::string small = kernel_of(32, 40, 48);  // cbrt(61440) = 39.5 < 40
  EXPECT_TRUE(direct(small)) << small;
  EXPECT_NE(small.find("MWG=8 "), std::string::npos) << small;
  EXPECT_NE(small.find("NWG=16 "), std::string::npos) << small;
  const std::string large = kernel_of(40, 40, 41);  // cbrt(65600) = 40.3
  EXPECT_FALSE(direct(large)) << large;
  EXPECT_NE(large.find("MWG=32 "), std::string::npos) << large << ": the profile's own kernel";
  prof::forget();
}

TEST(DirectChoice, OptionsForceItOnAndOff) {
  save_profile(0);  // never, by the profile
  Options on;
  on.direct = true;
  const std::string forced = kernel_of(100, 30, 20, on);
  EXPECT_TRUE(direct(forced)) << forced;
  EXPECT_NE(forced.find("MWG=8 "), std::string::npos) << forced << ": the profile's direct kernel";
  save_profile(1000);
  Options off;
  off.direct = false;
  EXPECT_FALSE(direct(kernel_of(20, 20, 20, off)));
  EXPECT_TRUE(direct(kernel_of(20, 20, 20)));
  // Explicit parameters name the kernel, whatever direct says.
  Options explicit_kernel;
  explicit_kernel.direct = true;
  explicit_kernel.kernel_params = {{"MWG", 16}, {"MDIMC", 4}};
  EXPECT_FALSE(direct(kernel_of(20, 20, 20, explicit_kernel)));
  prof::forget();
}

// A profile without the fields (one written before them) takes the defaults' threshold and
// kernel; one with a threshold but no kernel, the default kernel below it.
TEST(DirectChoice, WithoutTheFieldsTheDefaultsDecide) {
  const bool is_gpu = gpu::info(*gpu::open_device("")).is_gpu;
  const prof::Direct& defaults = prof::direct_defaults(is_gpu);
  save_profile(std::nullopt, /*with_kernel=*/false);
  const prof::Profile p = prof::load(prof::path_for(here()));
  EXPECT_FALSE(p.precisions.at(detail::Precision::s).direct_below.has_value());
  EXPECT_EQ(prof::direct_for(&p, Precision::s, is_gpu).below, defaults.below);
  EXPECT_EQ(direct(kernel_of(24, 24, 24)), defaults.applies(24, 24, 24));
  save_profile(100, /*with_kernel=*/false);
  const std::string k = kernel_of(24, 24, 24);
  EXPECT_TRUE(direct(k)) << k;
  const auto expected = gpu::with_defaults(gpu::Limits{1024, 1 << 20, is_gpu}, {{"KERNEL", 2}});
  EXPECT_NE(k.find("MWG=" + std::to_string(expected.at("MWG")) + " "), std::string::npos) << k;
  // dgemm has no entry in the profile: the defaults'.
  EXPECT_EQ(prof::direct_for(&p, Precision::d, is_gpu).below, defaults.below);
  prof::forget();
}

}  // namespace
}  // namespace tandem::test
