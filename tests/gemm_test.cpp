// Differential tests of tandem::gemm against a double-precision reference: every strategy (cpu,
// gpu, hybrid at several fractions), all four precisions and both layouts, the op combinations
// (for complex types the conjugate transposes too), awkward sizes, padded leading dimensions,
// alpha and beta in {0, 1, other}, and the NaN rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "profile/database.hpp"
#include "reference.hpp"
#include "seam_values.hpp"

namespace tandem::test {
namespace {

struct StrategyCase {
  const char* name;
  Strategy strategy;
  double fraction;
  bool discrete;  // stage operands as for a discrete GPU (device buffers, copies)
  std::map<std::string, int> kernel_params = {};
  int64_t offset = 0;   // 1: operands one element off alignment, so the unified copy path runs
  bool pinned = false;  // operands in pinned tandem_malloc memory (discrete path, direct copies)
  int cpu_threads = 0;  // the CPU share's threads (0: the default)
};

// The built-in H100 entry's kernel for tandem_malloc memory in its bucket of `size` for
// `precision` (empty if there is none: H100EntryHasItsPinnedKernels fails then).
std::map<std::string, int> h100_resident_kernel(
    int64_t size, detail::Precision precision = detail::Precision::s) {
  for (const auto& p : detail::profile::builtin()) {
    const auto s = p.precisions.find(precision);
    if (p.origin != "built-in:nvidia-h100" || s == p.precisions.end()) continue;
    for (const auto& b : s->second.buckets)
      if (b.size == size && b.resident) return b.resident->kernel;
  }
  return {};
}

const StrategyCase kStrategies[] = {
    {"cpu", Strategy::Cpu, 0.0, false},
    {"gpu", Strategy::Gpu, 1.0, false},
    {"hybrid0", Strategy::Hybrid, 0.0, false},
    {"hybrid30", Strategy::Hybrid, 0.3, false},
    {"hybrid50", Strategy::Hybrid, 0.5, false},
    {"hybrid100", Strategy::Hybrid, 1.0, false},
    {"gpu_discrete", Strategy::Gpu, 1.0, true},
    {"gpu_misaligned", Strategy::Gpu, 1.0, false, {}, 1},
    {"hybrid30_misaligned", Strategy::Hybrid, 0.3, false, {}, 1},
    {"hybrid50_discrete", Strategy::Hybrid, 0.5, true},
    {"gpu_discrete_two_queues", Strategy::Gpu, 1.0, true, {{"QUEUES", 2}}},
    // 64-bit index arithmetic, which real extents reach only past PoCL's 1 GiB allocations.
    {"gpu_long_index", Strategy::Gpu, 1.0, false, {{"INDEX_LONG", 1}}},
    // RaijinCL's codelets: the kernel reads an operand in the other layout (a transposing copy).
    {"gpu_codelet_TN", Strategy::Gpu, 1.0, false, {{"A_T", 1}, {"B_T", 0}}},
    {"hybrid_codelet_NT_discrete", Strategy::Hybrid, 0.5, true, {{"A_T", 0}, {"B_T", 1}}},
    // Other corners of the kernel family: no local memory, consecutive elements, scalar loads.
    {"gpu_variant",
     Strategy::Gpu,
     1.0,
     false,
     {{"SA", 0},
      {"SB", 1},
      {"STRIDED", 0},
      {"VW", 1},
      {"MWG", 16},
      {"NWG", 32},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"KWG", 8}}},
    {"gpu_variant2",
     Strategy::Gpu,
     1.0,
     false,
     {{"SA", 1},
      {"SB", 0},
      {"VW", 2},
      {"MWG", 32},
      {"NWG", 16},
      {"MDIMC", 8},
      {"NDIMC", 4},
      {"KWG", 32},
      {"KUNROLL", 1}}},
    // KERNEL 1, the tiled kernel: vector widths, double buffering, read layouts, discrete path.
    {"gpu_tiled",
     Strategy::Gpu,
     1.0,
     false,
     {{"KERNEL", 1},
      {"MWG", 32},
      {"NWG", 32},
      {"KWG", 8},
      {"MDIMC", 8},
      {"NDIMC", 8},
      {"VWM", 2},
      {"VWN", 2},
      {"VW", 2},
      {"DB", 0}}},
    {"gpu_tiled_db",
     Strategy::Gpu,
     1.0,
     false,
     {{"KERNEL", 1},
      {"MWG", 32},
      {"NWG", 64},
      {"KWG", 16},
      {"MDIMC", 8},
      {"NDIMC", 8},
      {"VWM", 4},
      {"VWN", 4},
      {"VW", 4},
      {"DB", 1},
      {"KUNROLL", 2},
      {"AK", 1}}},
    {"gpu_tiled_TN_discrete",
     Strategy::Gpu,
     1.0,
     true,
     {{"KERNEL", 1},
      {"A_T", 1},
      {"B_T", 0},
      {"MWG", 16},
      {"NWG", 64},
      {"KWG", 16},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"VWM", 1},
      {"VWN", 8},
      {"VW", 4},
      {"DB", 1}}},
    // Eight-wide vectors: A's rows as double/float8 (the H100 profile's sgemm shape), and lanes
    // taken one by one where a tile is stored transposed.
    {"gpu_tiled_vw8_TN",
     Strategy::Gpu,
     1.0,
     false,
     {{"KERNEL", 1},
      {"A_T", 1},
      {"B_T", 0},
      {"MWG", 64},
      {"NWG", 32},
      {"KWG", 16},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"VWM", 8},
      {"VWN", 1},
      {"VW", 8},
      {"DB", 1},
      {"KUNROLL", 16}}},
    {"gpu_tiled_vw8_NT",
     Strategy::Gpu,
     1.0,
     false,
     {{"KERNEL", 1},
      {"A_T", 0},
      {"B_T", 1},
      {"MWG", 32},
      {"NWG", 64},
      {"KWG", 8},
      {"MDIMC", 4},
      {"NDIMC", 8},
      {"VWM", 8},
      {"VWN", 8},
      {"VW", 8},
      {"DB", 0}}},
    // The H100 entry's sgemm kernels for tandem_malloc memory in its 256 and 1024 buckets (calls up
    // to 1448^3; the 512 bucket's are the 256 one's), and its dgemm kernel of the 512 bucket (16 x
    // 64 tiles, the only dgemm kernel of its shape there), as shipped, on the discrete path with
    // pinned operands; each runs in both precisions.
    {"gpu_pinned_h100_256", Strategy::Gpu, 1.0, true, h100_resident_kernel(256), 0, true},
    {"gpu_pinned_h100_1024", Strategy::Gpu, 1.0, true, h100_resident_kernel(1024), 0, true},
    {"gpu_pinned_h100_d512", Strategy::Gpu, 1.0, true,
     h100_resident_kernel(512, detail::Precision::d), 0, true},
    // tandem_malloc's pinned memory on a discrete device: copies straight from and into it.
    {"gpu_pinned", Strategy::Gpu, 1.0, true, {}, 0, true},
    {"hybrid_pinned_tiled",
     Strategy::Hybrid,
     0.5,
     true,
     {{"KERNEL", 1},
      {"MWG", 32},
      {"NWG", 32},
      {"KWG", 8},
      {"MDIMC", 8},
      {"NDIMC", 8},
      {"VWM", 2},
      {"VWN", 2},
      {"VW", 2},
      {"DB", 1}},
     0,
     true},
    {"gpu_pinned_TN", Strategy::Gpu, 1.0, true, {{"A_T", 1}, {"B_T", 0}}, 0, true},
    {"hybrid_tiled_NT",
     Strategy::Hybrid,
     0.5,
     false,
     {{"KERNEL", 1},
      {"A_T", 0},
      {"B_T", 1},
      {"MWG", 16},
      {"NWG", 16},
      {"KWG", 8},
      {"MDIMC", 4},
      {"NDIMC", 4},
      {"VWM", 2},
      {"VWN", 4},
      {"VW", 1},
      {"DB", 1},
      {"KUNROLL", 8}}},
    // A CPU share of few rows per thread: column panels, one single-threaded call each.
    {"hybrid90_columns", Strategy::Hybrid, 0.9, false, {}, 0, false, 2},
    {"hybrid70_columns_discrete", Strategy::Hybrid, 0.7, true, {}, 0, false, 2},
};
constexpr int kStrategyCount = static_cast<int>(sizeof(kStrategies) / sizeof(kStrategies[0]));

// The discrete path for one test: every discrete share is split into chunks, however small;
// with `pinned`, tandem_malloc pins every block.
detail::seams::Values discrete_scope(bool on, bool pinned) {
  if (on) return test::discrete(/*chunk_every_share=*/true, pinned);
  detail::seams::Values v;
  if (pinned) v.pinned_from = 0;
  return v;
}

struct Size {
  int64_t m, n, k;
};

// Multiples of no tile, degenerate extents, long and thin shapes.
const Size kSizes[] = {{0, 5, 3},     {5, 0, 3},       {4, 5, 0},     {1, 1, 1},
                       {7, 63, 1},    {63, 7, 100},    {1000, 7, 63}, {33, 1537, 9},
                       {1537, 3, 65}, {100, 130, 257}, {64, 64, 64}};

Options options_for(const StrategyCase& s) {
  Options o;
  o.strategy = s.strategy;
  if (s.strategy == Strategy::Hybrid) o.gpu_fraction = s.fraction;
  o.kernel_params = s.kernel_params;
  if (s.cpu_threads > 0) o.cpu_threads = s.cpu_threads;
  return o;
}

template <class T>
void run_case(const StrategyCase& s, Layout layout, Op op_a, Op op_b, const Size& size,
              std::complex<double> alpha, std::complex<double> beta, int64_t pad, uint64_t seed) {
  detail::seams::Override discrete(
      discrete_scope(s.discrete, s.pinned));  // first: tandem_malloc pins under it
  std::mt19937_64 rng(seed);
  const bool ta = op_a != Op::NoTrans, tb = op_b != Op::NoTrans;
  const T sentinel = static_cast<T>(-777.25);
  auto a = make_matrix<T>(layout, ta, size.m, size.k, pad, rng, sentinel, s.offset);
  auto b = make_matrix<T>(layout, tb, size.k, size.n, pad + 1, rng, sentinel, s.offset);
  auto c = make_matrix<T>(layout, false, size.m, size.n, pad, rng, sentinel, s.offset);
  a.conj = kComplex<T> && op_a == Op::ConjTrans;
  b.conj = kComplex<T> && op_b == Op::ConjTrans;
  if (beta == 0.0) {
    // C is poisoned: with beta = 0 none of it may be read.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < size.m; ++i)
      for (int64_t j = 0; j < size.n; ++j) c.at(i, j) = scalar<T>({nan, nan});
  }
  const auto before = c;
  const Reference ref = reference(a, b, c, alpha, beta);

  std::ostringstream what;
  auto letter = [](Op o) { return o == Op::NoTrans ? "N" : o == Op::Trans ? "T" : "C"; };
  what << s.name << " " << (layout == Layout::RowMajor ? "row" : "col") << " " << letter(op_a)
       << letter(op_b) << " m=" << size.m << " n=" << size.n << " k=" << size.k
       << " alpha=" << alpha << " beta=" << beta << " pad=" << pad;
  Report report;
  gemm<T>(layout, op_a, op_b, size.m, size.n, size.k, scalar<T>(alpha), a.ptr(), a.ld, b.ptr(),
          b.ld, scalar<T>(beta), c.ptr(), c.ld, options_for(s), &report);
  expect_matches(c, before, ref, size.k, what.str());
  EXPECT_FALSE(report.fell_back) << what.str() << ": " << report.fallback_reason;
  if (s.pinned && report.gpu_rows > 0 && size.k > 0 && alpha != 0.0) {
    // Every operand is copied straight from (and C into) the caller's memory; one the kernel
    // reads in the other layout is transposed on the device.
    EXPECT_EQ(report.a, Report::Buffer::Pinned) << what.str();
    EXPECT_EQ(report.b, Report::Buffer::Pinned) << what.str();
    EXPECT_EQ(report.c, Report::Buffer::Pinned) << what.str();
  }
  if (size.m > 0 && size.n > 0 && size.k > 0 && alpha != 0.0) {
    // Hybrid splits really split: both sides hold rows when 0 < fraction < 1 and m allows.
    const int64_t rows = layout == Layout::RowMajor ? size.m : size.n;
    EXPECT_EQ(report.gpu_rows + report.cpu_rows, rows) << what.str();
    if (s.fraction == 0.0) {
      EXPECT_EQ(report.gpu_rows, 0) << what.str();
    }
    if (s.fraction == 1.0) {
      EXPECT_EQ(report.cpu_rows, 0) << what.str();
    }
    if (s.fraction > 0 && s.fraction < 1 && rows >= 4) {
      EXPECT_GT(report.gpu_rows, 0) << what.str();
      EXPECT_GT(report.cpu_rows, 0) << what.str();
    }
  }
}

using Param = std::tuple<int /*strategy*/, bool /*double*/, Layout, Op, Op>;

class GemmTest : public ::testing::TestWithParam<Param> {};

TEST_P(GemmTest, MatchesReference) {
  const auto [si, dbl, layout, op_a, op_b] = GetParam();
  const double values[] = {0.0, 1.0, -1.5};
  int combo = 0;
  uint64_t seed = 1234 + static_cast<uint64_t>(si) * 97;
  for (const Size& size : kSizes) {
    const int64_t pad = (combo / 3) % 2 == 0 ? 0 : 3;
    for (int j = 0; j < 3; ++j, ++combo) {
      const double alpha = values[(combo / 3) % 3], beta = values[combo % 3];
      if (dbl)
        run_case<double>(kStrategies[si], layout, op_a, op_b, size, alpha, beta, pad, ++seed);
      else
        run_case<float>(kStrategies[si], layout, op_a, op_b, size, alpha, beta, pad, ++seed);
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [si, dbl, layout, op_a, op_b] = info.param;
  std::string s = std::string(kStrategies[si].name) + (dbl ? "_d_" : "_s_") +
                  (layout == Layout::RowMajor ? "row_" : "col_");
  auto op = [](Op o) { return o == Op::NoTrans ? "N" : o == Op::Trans ? "T" : "C"; };
  return s + op(op_a) + op(op_b);
}

INSTANTIATE_TEST_SUITE_P(All, GemmTest,
                         ::testing::Combine(::testing::Range(0, kStrategyCount), ::testing::Bool(),
                                            ::testing::Values(Layout::RowMajor, Layout::ColMajor),
                                            ::testing::Values(Op::NoTrans, Op::Trans),
                                            ::testing::Values(Op::NoTrans, Op::ConjTrans)),
                         param_name);

// cgemm and zgemm: every strategy, the same sizes and alpha, beta in {0, 1, (-1.5, 0.5)}, on
// the layouts and operations below: each conjugation of each operand, in both layouts, and the
// transposes beside them (the real suite covers transposes of every kind; these add what
// conjugation changes: the kernel's CONJ_A and CONJ_B, and the CPU BLAS's ConjTrans).
struct ComplexOps {
  Layout layout;
  Op a, b;
};
const ComplexOps kComplexOps[] = {
    {Layout::RowMajor, Op::NoTrans, Op::NoTrans}, {Layout::RowMajor, Op::ConjTrans, Op::NoTrans},
    {Layout::RowMajor, Op::Trans, Op::ConjTrans}, {Layout::ColMajor, Op::NoTrans, Op::ConjTrans},
    {Layout::ColMajor, Op::ConjTrans, Op::Trans}, {Layout::ColMajor, Op::ConjTrans, Op::ConjTrans}};
constexpr int kComplexOpsCount = static_cast<int>(std::size(kComplexOps));

using ComplexParam = std::tuple<int /*strategy*/, bool /*zgemm*/, int /*ops*/>;
class ComplexGemmTest : public ::testing::TestWithParam<ComplexParam> {};

TEST_P(ComplexGemmTest, MatchesReference) {
  const auto [si, z, oi] = GetParam();
  const std::complex<double> values[] = {0.0, 1.0, {-1.5, 0.5}};
  const ComplexOps& ops = kComplexOps[oi];
  int combo = 0;
  uint64_t seed = 4321 + static_cast<uint64_t>(si) * 97 + static_cast<uint64_t>(oi);
  for (const Size& size : kSizes) {
    const int64_t pad = (combo / 3) % 2 == 0 ? 0 : 3;
    for (int j = 0; j < 3; ++j, ++combo) {
      const auto alpha = values[(combo / 3) % 3], beta = values[combo % 3];
      if (z)
        run_case<std::complex<double>>(kStrategies[si], ops.layout, ops.a, ops.b, size, alpha, beta,
                                       pad, ++seed);
      else
        run_case<std::complex<float>>(kStrategies[si], ops.layout, ops.a, ops.b, size, alpha, beta,
                                      pad, ++seed);
    }
  }
}

std::string complex_name(const ::testing::TestParamInfo<ComplexParam>& info) {
  const auto [si, z, oi] = info.param;
  const ComplexOps& ops = kComplexOps[oi];
  auto op = [](Op o) { return o == Op::NoTrans ? "N" : o == Op::Trans ? "T" : "C"; };
  return std::string(kStrategies[si].name) + (z ? "_z_" : "_c_") +
         (ops.layout == Layout::RowMajor ? "row_" : "col_") + op(ops.a) + op(ops.b);
}

INSTANTIATE_TEST_SUITE_P(All, ComplexGemmTest,
                         ::testing::Combine(::testing::Range(0, kStrategyCount), ::testing::Bool(),
                                            ::testing::Range(0, kComplexOpsCount)),
                         complex_name);

// The H100 entry ships the tiled kernels the cases above run (docs/PERFORMANCE.md, "kernels for
// small calls from tandem_malloc memory"); without them those cases would test the default kernel.
TEST(GemmKernels, H100EntryHasItsPinnedKernels) {
  for (const auto& [size, precision] :
       {std::pair<int64_t, detail::Precision>{256, detail::Precision::s},
        {1024, detail::Precision::s},
        {512, detail::Precision::d}}) {
    const auto kernel = h100_resident_kernel(size, precision);
    const std::string name = std::string("gpu_pinned_h100_") +
                             (precision == detail::Precision::d ? "d" : "") + std::to_string(size);
    ASSERT_FALSE(kernel.empty()) << name;
    EXPECT_EQ(kernel.at("KERNEL"), 1) << name;
    EXPECT_EQ(kernel.at("A_T"), -1) << name;  // A and B as stored: no transpose launch
    EXPECT_EQ(kernel.at("B_T"), -1) << name;
    // The cases, made before main(), hold the same kernels.
    const auto* c = std::find_if(std::begin(kStrategies), std::end(kStrategies),
                                 [&name](const StrategyCase& x) { return x.name == name; });
    ASSERT_NE(c, std::end(kStrategies)) << name;
    EXPECT_EQ(c->kernel_params, kernel) << name;
  }
}

// alpha = 0 reads neither A nor B; beta = 0 does not read C; k = 0 means C = beta * C; NaN and
// infinities in C survive beta != 0.
class NanRules : public ::testing::TestWithParam<std::tuple<int, bool>> {};

template <class T>
void nan_rules(const StrategyCase& s) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const int64_t m = 37, n = 29, k = 19;
  std::vector<T> a(m * k, nan), b(k * n, inf), c(m * n);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<T>(i % 7) - T(3);
  const Options o = options_for(s);
  detail::seams::Override discrete(discrete_scope(s.discrete, false));

  // alpha = 0, beta = 2: C doubles, whatever A and B hold.
  auto c1 = c;
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(0), a.data(), k, b.data(), n, T(2),
          c1.data(), n, o);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c1[i], T(2) * c[i]) << s.name << " at " << i;

  // alpha = 0, beta = 0: C becomes zero even if it held NaN.
  std::vector<T> c2(m * n, nan);
  gemm<T>(Layout::ColMajor, Op::Trans, Op::NoTrans, m, n, k, T(0), a.data(), k, b.data(), k, T(0),
          c2.data(), m, o);
  for (size_t i = 0; i < c2.size(); ++i) ASSERT_EQ(c2[i], T(0)) << s.name << " at " << i;

  // k = 0: C = beta * C, A and B never touched (null is fine).
  auto c3 = c;
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, 0, T(1), nullptr, 1, nullptr, n, T(-1),
          c3.data(), n, o);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c3[i], -c[i]) << s.name << " at " << i;

  // beta = 0 with NaN in C and a real product: NaN is overwritten.
  std::vector<T> ones_a(m * k, T(1)), ones_b(k * n, T(0.5));
  std::vector<T> c4(m * n, nan);
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(2), ones_a.data(), k,
          ones_b.data(), n, T(0), c4.data(), n, o);
  for (size_t i = 0; i < c4.size(); ++i) ASSERT_EQ(c4[i], T(k)) << s.name << " at " << i;

  // beta != 0 with NaN and infinities in C and a real product: they stay, the rest is exact (on a
  // discrete device from ordinary memory, C's old values are added on the host).
  auto c5 = c;
  for (size_t i = 0; i < c5.size(); i += 5) c5[i] = i % 10 == 0 ? nan : (i % 3 == 0 ? inf : -inf);
  const auto c5_old = c5;
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(2), ones_a.data(), k,
          ones_b.data(), n, T(0.5), c5.data(), n, o);
  for (size_t i = 0; i < c5.size(); ++i) {
    if (std::isnan(c5_old[i])) {
      ASSERT_TRUE(std::isnan(c5[i])) << s.name << " at " << i;
    } else {
      ASSERT_EQ(c5[i], T(k) + T(0.5) * c5_old[i]) << s.name << " at " << i;
    }
  }
}

TEST_P(NanRules, Hold) {
  const auto [si, dbl] = GetParam();
  if (dbl)
    nan_rules<double>(kStrategies[si]);
  else
    nan_rules<float>(kStrategies[si]);
}

std::string nan_name(const ::testing::TestParamInfo<std::tuple<int, bool>>& p) {
  return std::string(kStrategies[std::get<0>(p.param)].name) + (std::get<1>(p.param) ? "_d" : "_s");
}

INSTANTIATE_TEST_SUITE_P(All, NanRules,
                         ::testing::Combine(::testing::Range(0, kStrategyCount), ::testing::Bool()),
                         nan_name);

// The same rules for complex values, as the reference BLAS has them: alpha = 0 reads neither A
// nor B (NaN there never reaches C), beta = 0 does not read C, k = 0 means C = beta * C, and a
// NaN in C survives beta != 0.
class ComplexNanRules : public ::testing::TestWithParam<std::tuple<int, bool>> {};

template <class T>
void complex_nan_rules(const StrategyCase& s) {
  using R = real_t<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN(), inf = std::numeric_limits<R>::infinity();
  const int64_t m = 37, n = 29, k = 19;
  std::vector<T> a(m * k, T(nan, 1)), b(k * n, T(inf, nan)), c(m * n);
  for (size_t i = 0; i < c.size(); ++i) c[i] = T(R(i % 7) - R(3), R(i % 5));
  const Options o = options_for(s);
  detail::seams::Override discrete(discrete_scope(s.discrete, false));

  // alpha = 0, beta = (0, 2): C = beta * C exactly, whatever A and B hold.
  auto c1 = c;
  gemm<T>(Layout::RowMajor, Op::ConjTrans, Op::NoTrans, m, n, k, T(0), a.data(), m, b.data(), n,
          T(0, 2), c1.data(), n, o);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c1[i], T(0, 2) * c[i]) << s.name << " at " << i;

  // alpha = 0, beta = 0: C becomes zero even if it held NaN.
  std::vector<T> c2(m * n, T(nan, nan));
  gemm<T>(Layout::ColMajor, Op::ConjTrans, Op::ConjTrans, m, n, k, T(0), a.data(), k, b.data(), n,
          T(0), c2.data(), m, o);
  for (size_t i = 0; i < c2.size(); ++i) ASSERT_EQ(c2[i], T(0)) << s.name << " at " << i;

  // k = 0: C = beta * C, A and B never touched (null is fine).
  auto c3 = c;
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::ConjTrans, m, n, 0, T(1), nullptr, 1, nullptr, 1,
          T(-1), c3.data(), n, o);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c3[i], -c[i]) << s.name << " at " << i;

  // beta = 0 with NaN in C and a product of exact values: NaN is overwritten, op(A) conjugated.
  std::vector<T> ones_a(m * k, T(1, 1)), halves_b(k * n, T(0.5, 0));
  std::vector<T> c4(m * n, T(nan, inf));
  gemm<T>(Layout::RowMajor, Op::ConjTrans, Op::NoTrans, m, n, k, T(2), ones_a.data(), m,
          halves_b.data(), n, T(0), c4.data(), n, o);
  for (size_t i = 0; i < c4.size(); ++i) ASSERT_EQ(c4[i], T(R(k), R(-k))) << s.name << " at " << i;

  // beta != 0 with NaN in C: it stays NaN; the rest is exact.
  auto c5 = c;
  for (size_t i = 0; i < c5.size(); i += 5) c5[i] = T(nan, 0);
  gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, m, n, k, T(2), ones_a.data(), k,
          halves_b.data(), n, T(1), c5.data(), n, o);
  for (size_t i = 0; i < c5.size(); ++i) {
    if (i % 5 == 0) {
      ASSERT_TRUE(is_nan(c5[i])) << s.name << " at " << i;
    } else {
      ASSERT_EQ(c5[i], T(R(k), R(k)) + c[i]) << s.name << " at " << i;
    }
  }
}

TEST_P(ComplexNanRules, Hold) {
  const auto [si, z] = GetParam();
  if (z)
    complex_nan_rules<std::complex<double>>(kStrategies[si]);
  else
    complex_nan_rules<std::complex<float>>(kStrategies[si]);
}

std::string complex_nan_name(const ::testing::TestParamInfo<std::tuple<int, bool>>& p) {
  return std::string(kStrategies[std::get<0>(p.param)].name) + (std::get<1>(p.param) ? "_z" : "_c");
}

INSTANTIATE_TEST_SUITE_P(All, ComplexNanRules,
                         ::testing::Combine(::testing::Range(0, kStrategyCount), ::testing::Bool()),
                         complex_nan_name);

}  // namespace
}  // namespace tandem::test
