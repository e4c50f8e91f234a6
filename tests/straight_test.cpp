// The drop-in's assembly GEMM entries of every precision (src/blas3/dropin/straight_x86_64.S)
// against the C++ rule in
// src/blas3/dropin/straight.hpp. This program links the assembly and the table alone, with
// recorders standing in for OpenBLAS's entries (published as the table's targets) and for the C++
// entries the assembly falls back to (tandem_rest_*). Each of many calls, with arguments drawn to
// sit on every edge of the rule (sizes around 0 and the threshold, leading dimensions one short,
// invalid transposes and layouts, NULL operands, alpha 0, -0 and NaN, a complex alpha's two parts
// each), must reach exactly the one the rule names, with every argument as the caller passed it:
// pointers, integers, alpha and beta to the bit (NaN included), or where CBLAS passes a complex
// scalar by address, that address.
#include "blas3/dropin/straight.hpp"

#include <cblas.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

// What one call delivered, and to whom: OpenBLAS's entry or the C++ one, and for which routine
// (a Fortran recorder sees only pointers, so the routine is what tells sgemm_ from dgemm_).
enum class Reached { Nobody, Own, Rest };
enum class Routine {
  None,
  Sgemm,
  Dgemm,
  Cgemm,
  Zgemm,
  CblasSgemm,
  CblasDgemm,
  CblasCgemm,
  CblasZgemm
};

struct Delivered {
  Reached to = Reached::Nobody;
  Routine routine = Routine::None;
  std::array<std::uint64_t, 15> words{};  // every argument, as bits
};
Delivered g_delivered;

template <class T>
std::uint64_t bits(T value) {
  std::uint64_t word = 0;
  std::memcpy(&word, &value, sizeof value);
  return word;
}

template <class... Args>
void deliver(Reached to, Routine routine, Args... args) {
  g_delivered.to = to;
  g_delivered.routine = routine;
  g_delivered.words = {};
  std::size_t i = 0;
  ((g_delivered.words[i++] = bits(args)), ...);
}

// A CBLAS GEMM's scalars and matrices as cblas.h passes them (a complex type's by address).
using tandem::detail::blas_entries::CblasIn;
using tandem::detail::blas_entries::CblasOut;
using tandem::detail::blas_entries::CblasScalar;

using Complex = std::complex<float>;
using DoubleComplex = std::complex<double>;

}  // namespace

#define FORTRAN_PARAMS(T)                                                               \
  const char *ta, const char *tb, const blasint *m, const blasint *n, const blasint *k, \
      const T *alpha, const T *a, const blasint *lda, const T *b, const blasint *ldb,   \
      const T *beta, T *c, const blasint *ldc
#define FORTRAN_ARGS ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
#define CBLAS_PARAMS(T)                                                                       \
  CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, \
      CblasScalar<T> alpha, CblasIn<T> a, blasint lda, CblasIn<T> b, blasint ldb,             \
      CblasScalar<T> beta, CblasOut<T> c, blasint ldc
#define CBLAS_ARGS                                                                                \
  static_cast<int>(order), static_cast<int>(ta), static_cast<int>(tb), m, n, k, alpha, a, lda, b, \
      ldb, beta, c, ldc

// One precision's entries: T its element type, p its letter, P its Routine's letter.
#define TANDEM_GEMM_RECORDERS(T, p, P)                                                             \
  extern "C" {                                                                                     \
  /* The assembly's entries (linked into this program, not from a library). */                     \
  void p##gemm_(FORTRAN_PARAMS(T));                                                                \
  void cblas_##p##gemm(CBLAS_PARAMS(T));                                                           \
  /* The C++ entries the assembly falls back to, recorded. */                                      \
  void tandem_rest_##p##gemm_(FORTRAN_PARAMS(T)) {                                                 \
    deliver(Reached::Rest, Routine::P##gemm, FORTRAN_ARGS);                                        \
  }                                                                                                \
  void tandem_rest_cblas_##p##gemm(CBLAS_PARAMS(T)) {                                              \
    deliver(Reached::Rest, Routine::Cblas##P##gemm, CBLAS_ARGS);                                   \
  }                                                                                                \
  }                                                                                                \
  namespace {                                                                                      \
  /* OpenBLAS's entries, recorded. */                                                              \
  void own_##p##gemm(FORTRAN_PARAMS(T)) { deliver(Reached::Own, Routine::P##gemm, FORTRAN_ARGS); } \
  void own_cblas_##p##gemm(CBLAS_PARAMS(T)) {                                                      \
    deliver(Reached::Own, Routine::Cblas##P##gemm, CBLAS_ARGS);                                    \
  }                                                                                                \
  }
TANDEM_GEMM_RECORDERS(float, s, S)
TANDEM_GEMM_RECORDERS(double, d, D)
TANDEM_GEMM_RECORDERS(Complex, c, C)
TANDEM_GEMM_RECORDERS(DoubleComplex, z, Z)
#undef TANDEM_GEMM_RECORDERS

namespace {

namespace straight = tandem::detail::dropin::straight;

void publish(double threshold) {
  using tandem::detail::Precision;
  straight::publish_gemm(Precision::s, reinterpret_cast<void *>(&own_sgemm),
                         reinterpret_cast<void *>(&own_cblas_sgemm));
  straight::publish_gemm(Precision::d, reinterpret_cast<void *>(&own_dgemm),
                         reinterpret_cast<void *>(&own_cblas_dgemm));
  straight::publish_gemm(Precision::c, reinterpret_cast<void *>(&own_cgemm),
                         reinterpret_cast<void *>(&own_cblas_cgemm));
  straight::publish_gemm(Precision::z, reinterpret_cast<void *>(&own_zgemm),
                         reinterpret_cast<void *>(&own_cblas_zgemm));
  straight::publish(threshold);
}

// Draws arguments on the rule's edges.
struct Draw {
  std::mt19937 rng{20261124};

  template <class V>
  V pick(std::initializer_list<V> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + d(rng));
  }
  // 2^21 cubed is 2^63, the first product that overflows.
  blasint size() {
    return pick<blasint>({std::numeric_limits<blasint>::min(), -1, 0, 1, 2, 3, 5, 8, 64, 1000,
                          1 << 20, 2097151, 2097152, 1 << 30, 2147483647});
  }
  // A leading dimension around the least the rule allows.
  blasint ld(blasint least) {
    return pick<blasint>({-1, 0, 1}) == 0 ? std::max<blasint>(1, least) - 1
                                          : std::max<blasint>(1, least) + pick<blasint>({0, 0, 3});
  }
  blasint any_ld() { return pick<blasint>({-1, 0, 1, 2, 8, 1000, 1 << 21}); }
  // A scalar on the rule's edges; a complex one's two parts drawn apart (0 only when both are).
  template <class T>
  T alpha() {
    if constexpr (std::is_floating_point_v<T>)
      return pick<T>({T(0), T(-0.0), T(1), T(-2.5), std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min()});
    else
      return T(alpha<typename T::value_type>(), alpha<typename T::value_type>());
  }
  double threshold() {
    return pick<double>(
        {-5.0, 0.0, 1.0, 8.0, 8.5, 27.0, 262144.0, 1e9, 0x1p63 - 1024, 0x1p63, 1e30});
  }
  // A Fortran transpose character: one of the listed ones, or any byte.
  char fortran_op() {
    return pick<int>({0, 1, 1})
               ? pick<char>({'N', 'n', 'T', 't', 'C', 'c', 'X', '\0', '\xff'})
               : static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
  }
  // Garbage for the upper half of a 32-bit argument's register or stack slot.
  std::uint64_t upper() {
    return pick<int>({0, 1})
               ? std::uint64_t(std::uniform_int_distribution<std::uint32_t>()(rng)) << 32
               : 0;
  }
  const void *pointer(const void *p) { return pick<int>({0, 1, 1, 1, 1, 1}) ? p : nullptr; }
  int op_of(int value) {
    return pick<int>({0, 1, 1, 1, 1, 1, 1}) ? value
                                            : pick<int>({0, 110, 114, 111 + (1 << 20), -111});
  }
};

// Storage the entries never read (neither side of the recording touches A, B or C).
template <class T>
T *storage() {
  static T s[2];
  return s;
}

// A scalar as cblas.h passes it: a real one by value, a complex one by address.
template <class T>
CblasScalar<T> by_cblas(const T &x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return &x;
}

template <class T>
void check_fortran(void (*entry)(FORTRAN_PARAMS(T)), Routine routine, int cases) {
  Draw draw;
  int own = 0, rest = 0;
  for (int i = 0; i < cases; ++i) {
    publish(draw.threshold());
    const std::uint64_t most = straight::most();
    const char ta = draw.fortran_op(), tb = draw.fortran_op();
    const blasint m = draw.size(), n = draw.size(), k = draw.size();
    const bool na = ta == 'N' || ta == 'n', nb = tb == 'N' || tb == 'n';
    const blasint lda = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(na ? m : k) : draw.any_ld();
    const blasint ldb = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(nb ? k : n) : draw.any_ld();
    const blasint ldc = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(m) : draw.any_ld();
    const T alpha = draw.alpha<T>(), beta = T(0.5);
    const T *a = static_cast<const T *>(draw.pointer(storage<T>()));
    const T *b = static_cast<const T *>(draw.pointer(storage<T>() + 1));
    T *c = const_cast<T *>(static_cast<const T *>(draw.pointer(storage<T>())));

    g_delivered = {};
    entry(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    const bool goes =
        straight::goes(most, TANDEM_COL_MAJOR, straight::fortran_op(ta), straight::fortran_op(tb),
                       m, n, k, alpha, a, lda, b, ldb, c, ldc);
    const Delivered expected = [&] {
      Delivered d;
      d.to = goes ? Reached::Own : Reached::Rest;
      d.routine = routine;
      const T *alpha_p = &alpha;
      const T *beta_p = &beta;
      const blasint *m_p = &m, *n_p = &n, *k_p = &k, *lda_p = &lda, *ldb_p = &ldb, *ldc_p = &ldc;
      const char *ta_p = &ta, *tb_p = &tb;
      d.words = {bits(ta_p),    bits(tb_p), bits(m_p),   bits(n_p), bits(k_p),
                 bits(alpha_p), bits(a),    bits(lda_p), bits(b),   bits(ldb_p),
                 bits(beta_p),  bits(c),    bits(ldc_p), 0,         0};
      return d;
    }();
    ASSERT_EQ(g_delivered.to, expected.to)
        << "case " << i << ": ta " << int(ta) << " tb " << int(tb) << " m " << m << " n " << n
        << " k " << k << " alpha " << alpha << " lda " << lda << " ldb " << ldb << " ldc " << ldc
        << " a " << a << " b " << b << " c " << c << " most " << most;
    ASSERT_EQ(g_delivered.routine, expected.routine) << "case " << i;
    ASSERT_EQ(g_delivered.words, expected.words) << "case " << i;
    (goes ? own : rest)++;
  }
  // Both outcomes, often: a rule that sent everything one way would fail above, but make sure
  // the draw reached both.
  EXPECT_GT(own, cases / 1000);
  EXPECT_GT(rest, cases / 2);
}

// The CBLAS entry's signature with its integers widened to 64 bits, to call it with garbage in
// the upper halves of their registers and stack slots, which the ABI leaves undefined.
template <class T>
using WideCblas = void (*)(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                           std::uint64_t, std::uint64_t, CblasScalar<T>, CblasIn<T>, std::uint64_t,
                           CblasIn<T>, std::uint64_t, CblasScalar<T>, CblasOut<T>, std::uint64_t);

template <class T>
void check_cblas(void (*entry)(CBLAS_PARAMS(T)), Routine routine, int cases) {
  const auto wide = reinterpret_cast<WideCblas<T>>(reinterpret_cast<void *>(entry));
  const auto widen = [](Draw &d, int v) { return d.upper() | static_cast<std::uint32_t>(v); };
  Draw draw;
  int own = 0, rest = 0;
  for (int i = 0; i < cases; ++i) {
    publish(draw.threshold());
    const std::uint64_t most = straight::most();
    const int layout = draw.pick<int>({CblasRowMajor, CblasColMajor, CblasRowMajor, CblasColMajor,
                                       CblasRowMajor, CblasColMajor, 100, 103, 0});
    const int ta = draw.op_of(draw.pick<int>({CblasNoTrans, CblasTrans, CblasConjTrans}));
    const int tb = draw.op_of(draw.pick<int>({CblasNoTrans, CblasTrans, CblasConjTrans}));
    const blasint m = draw.size(), n = draw.size(), k = draw.size();
    const bool row = layout == CblasRowMajor;
    const bool na = ta == CblasNoTrans, nb = tb == CblasNoTrans;
    const blasint least_a = row == na ? k : m, least_b = row == nb ? n : k, least_c = row ? n : m;
    const blasint lda = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(least_a) : draw.any_ld();
    const blasint ldb = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(least_b) : draw.any_ld();
    const blasint ldc = draw.pick<int>({0, 1, 1, 1}) ? draw.ld(least_c) : draw.any_ld();
    const T alpha = draw.alpha<T>(), beta = draw.alpha<T>();
    const T *a = static_cast<const T *>(draw.pointer(storage<T>()));
    const T *b = static_cast<const T *>(draw.pointer(storage<T>() + 1));
    T *c = const_cast<T *>(static_cast<const T *>(draw.pointer(storage<T>())));

    const CblasScalar<T> alpha_arg = by_cblas(alpha), beta_arg = by_cblas(beta);
    g_delivered = {};
    if (draw.pick<int>({0, 1}))
      entry(static_cast<CBLAS_ORDER>(layout), static_cast<CBLAS_TRANSPOSE>(ta),
            static_cast<CBLAS_TRANSPOSE>(tb), m, n, k, alpha_arg, a, lda, b, ldb, beta_arg, c, ldc);
    else
      wide(widen(draw, layout), widen(draw, ta), widen(draw, tb), widen(draw, m), widen(draw, n),
           widen(draw, k), alpha_arg, a, widen(draw, lda), b, widen(draw, ldb), beta_arg, c,
           widen(draw, ldc));
    const bool goes = straight::goes(most, layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, c, ldc);
    Delivered expected;
    expected.to = goes ? Reached::Own : Reached::Rest;
    expected.routine = routine;
    expected.words = {bits(layout), bits(ta),        bits(tb), bits(m),   bits(n),
                      bits(k),      bits(alpha_arg), bits(a),  bits(lda), bits(b),
                      bits(ldb),    bits(beta_arg),  bits(c),  bits(ldc), 0};
    ASSERT_EQ(g_delivered.to, expected.to)
        << "case " << i << ": layout " << layout << " ta " << ta << " tb " << tb << " m " << m
        << " n " << n << " k " << k << " alpha " << alpha << " lda " << lda << " ldb " << ldb
        << " ldc " << ldc << " a " << a << " b " << b << " c " << c << " most " << most;
    ASSERT_EQ(g_delivered.routine, expected.routine) << "case " << i;
    ASSERT_EQ(g_delivered.words, expected.words) << "case " << i;
    (goes ? own : rest)++;
  }
  EXPECT_GT(own, cases / 1000);
  EXPECT_GT(rest, cases / 2);
}

constexpr int kCases = 400000;

TEST(Straight, FortranSgemmFollowsTheRule) {
  check_fortran<float>(&sgemm_, Routine::Sgemm, kCases);
}
TEST(Straight, FortranDgemmFollowsTheRule) {
  check_fortran<double>(&dgemm_, Routine::Dgemm, kCases);
}
TEST(Straight, CblasSgemmFollowsTheRule) {
  check_cblas<float>(&cblas_sgemm, Routine::CblasSgemm, kCases);
}
TEST(Straight, CblasDgemmFollowsTheRule) {
  check_cblas<double>(&cblas_dgemm, Routine::CblasDgemm, kCases);
}
TEST(Straight, FortranCgemmFollowsTheRule) {
  check_fortran<Complex>(&cgemm_, Routine::Cgemm, kCases);
}
TEST(Straight, FortranZgemmFollowsTheRule) {
  check_fortran<DoubleComplex>(&zgemm_, Routine::Zgemm, kCases);
}
TEST(Straight, CblasCgemmFollowsTheRule) {
  check_cblas<Complex>(&cblas_cgemm, Routine::CblasCgemm, kCases);
}
TEST(Straight, CblasZgemmFollowsTheRule) {
  check_cblas<DoubleComplex>(&cblas_zgemm, Routine::CblasZgemm, kCases);
}

// The threshold (TANDEM_MIN_MNK, a double) becomes the table's integer bound without moving it:
// a whole product goes straight exactly when it is below the threshold.
TEST(Straight, PublishingKeepsTheThreshold) {
  for (double threshold : {-1.0, 0.0, 0.5, 1.0, 7.5, 8.0, 8.25, 16777216.0, 1e15, 1e19, 1e300}) {
    publish(threshold);
    for (std::int64_t product :
         {std::int64_t(1), std::int64_t(7), std::int64_t(8), std::int64_t(9),
          std::int64_t(16777215), std::int64_t(16777216), std::int64_t(999999999999999),
          std::int64_t(1000000000000000), std::int64_t(1) << 62})
      EXPECT_EQ(static_cast<std::uint64_t>(product) <= straight::most(),
                static_cast<double>(product) < threshold)
          << "threshold " << threshold << ", product " << product;
  }
}

// A complex product's work is 4 m n k real multiply-adds (the rule every complex entry applies):
// it goes straight exactly when 4 m n k is at most the bound, a real one when m n k is.
TEST(Straight, ComplexWorkIsFourMultiplyAddsAProduct) {
  const std::complex<double> z[1] = {{1, 1}};
  const double x[1] = {1};
  for (std::uint64_t most : {std::uint64_t(3), std::uint64_t(4), std::uint64_t(4 * 60 * 7 * 5 - 1),
                             std::uint64_t(4 * 60 * 7 * 5), std::uint64_t(60 * 7 * 5)})
    for (int m : {1, 60})
      for (int ta : {TANDEM_NO_TRANS, TANDEM_CONJ_TRANS}) {
        const int n = m == 1 ? 1 : 7, k = m == 1 ? 1 : 5;
        const std::uint64_t product = std::uint64_t(m) * n * k;
        // Leading dimensions large enough for any op; the operands are never read.
        EXPECT_EQ(straight::goes(most, TANDEM_COL_MAJOR, ta, TANDEM_CONJ_TRANS, m, n, k,
                                 std::complex<double>(0, 1), z, 60, z, 60, z, 60),
                  4 * product <= most)
            << "most " << most << ", m n k " << product;
        EXPECT_EQ(straight::goes(most, TANDEM_COL_MAJOR, ta, TANDEM_TRANS, m, n, k, 1.0, x, 60, x,
                                 60, x, 60),
                  product <= most);
      }
}

// The bound as the table holds it before anything publishes (the table is constant-initialised,
// so this dynamic initialiser reads it as a program's constructors would).
const std::uint64_t g_initial_most = straight::most();

// Until the drop-in publishes, the bound is 0 and every call goes to the C++ entry, which
// publishes: a call before that (from a constructor, say) can never jump through an unset entry.
TEST(Straight, NothingGoesStraightBeforePublishing) {
  EXPECT_EQ(g_initial_most, 0u);
  publish(0);
  const char n = 'N';
  const blasint one = 1;
  const double alpha = 1, beta = 0;
  double x = 0;
  g_delivered = {};
  dgemm_(&n, &n, &one, &one, &one, &alpha, &x, &one, &x, &one, &beta, &x, &one);
  EXPECT_EQ(g_delivered.to, Reached::Rest);
}

}  // namespace
