// The drop-in's assembly entries for syrk, syr2k, symm, trmm and trsm
// (src/blas3/dropin/straight_x86_64.S) against the C++ rule of src/blas3/dropin/level3_entries.cpp
// (src/blas3/level3_rules.hpp and the threshold), less its one extra case: a call with beta = 0
// goes to the C++ entry, which zeroes C first. Linked into straight_test with the assembly and the
// table alone, recorders standing in for OpenBLAS's entries (published in the table) and for the
// C++ entries (tandem_rest_*). Each of many calls per entry, with arguments on every edge of the
// rule (sizes around 0 and up to INT_MAX, products at and just past the threshold, leading
// dimensions one short, any option byte or enumeration, both layouts and invalid ones, NULL
// operands, alpha and beta 0, -0, NaN and denormal, entries missing from the table, garbage in the
// upper halves of the CBLAS entries' 32-bit arguments and above the low lane of their scalars' XMM
// registers), must reach exactly the one the rule names, with every argument as the caller passed
// it.
#include <cblas.h>
#include <gtest/gtest.h>
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "blas3/dropin/blas_entries.hpp"
#include "blas3/dropin/straight.hpp"
#include "blas3/level3_rules.hpp"

namespace {

namespace straight = tandem::detail::dropin::straight;
namespace rules = tandem::detail::level3_rules;
using tandem::detail::blas_entries::Level3;

enum class Reached { Nobody, Own, Rest };

struct Delivered {
  Reached to = Reached::Nobody;
  int routine = -1;
  std::array<std::uint64_t, 15> words{};
};
Delivered g_got;

template <class T>
std::uint64_t bits(T value) {
  std::uint64_t word = 0;
  std::memcpy(&word, &value, sizeof value);
  return word;
}

// A recorder: the routine's number (its place in the table: entry offset / 8, plus 12 for
// double) and whether it stands for OpenBLAS's entry or the C++ one.
template <int Routine, Reached To, class... Args>
void record(Args... args) {
  g_got.to = To;
  g_got.routine = Routine;
  g_got.words = {};
  std::size_t i = 0;
  ((g_got.words[i++] = bits(args)), ...);
}

constexpr int kSyrk = 1, kSyr2k = 2, kSymm = 3, kTrmm = 4, kTrsm = 5, kCblas = 6, kDouble = 12;

}  // namespace

// The C++ entries the assembly falls back to, recorded.
#define TANDEM_REST(T, p, P)                                                                       \
  void tandem_rest_##p##syrk_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const T* e, const T* f, const blasint* g, const T* h, T* i,          \
                              const blasint* j) {                                                  \
    record<P + kSyrk, Reached::Rest>(a, b, c, d, e, f, g, h, i, j);                                \
  }                                                                                                \
  void tandem_rest_##p##syr2k_(const char* a, const char* b, const blasint* c, const blasint* d,   \
                               const T* e, const T* f, const blasint* g, const T* h,               \
                               const blasint* i, const T* j, T* k, const blasint* l) {             \
    record<P + kSyr2k, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                         \
  }                                                                                                \
  void tandem_rest_##p##symm_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const T* e, const T* f, const blasint* g, const T* h,                \
                              const blasint* i, const T* j, T* k, const blasint* l) {              \
    record<P + kSymm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                          \
  }                                                                                                \
  void tandem_rest_##p##trmm_(const char* a, const char* b, const char* c, const char* d,          \
                              const blasint* e, const blasint* f, const T* g, const T* h,          \
                              const blasint* i, T* j, const blasint* k) {                          \
    record<P + kTrmm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k);                             \
  }                                                                                                \
  void tandem_rest_##p##trsm_(const char* a, const char* b, const char* c, const char* d,          \
                              const blasint* e, const blasint* f, const T* g, const T* h,          \
                              const blasint* i, T* j, const blasint* k) {                          \
    record<P + kTrsm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k);                             \
  }                                                                                                \
  void tandem_rest_cblas_##p##syrk(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,      \
                                   blasint e, T f, const T* g, blasint h, T i, T* j, blasint k) {  \
    record<P + kCblas + kSyrk, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, k);     \
  }                                                                                                \
  void tandem_rest_cblas_##p##syr2k(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,     \
                                    blasint e, T f, const T* g, blasint h, const T* i, blasint j,  \
                                    T k, T* l, blasint m) {                                        \
    record<P + kCblas + kSyr2k, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, k, l,  \
                                               m);                                                 \
  }                                                                                                \
  void tandem_rest_cblas_##p##symm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, blasint d,           \
                                   blasint e, T f, const T* g, blasint h, const T* i, blasint j,   \
                                   T k, T* l, blasint m) {                                         \
    record<P + kCblas + kSymm, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, k, l,   \
                                              m);                                                  \
  }                                                                                                \
  void tandem_rest_cblas_##p##trmm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d,   \
                                   CBLAS_DIAG e, blasint f, blasint g, T h, const T* i, blasint j, \
                                   T* k, blasint l) {                                              \
    record<P + kCblas + kTrmm, Reached::Rest>(int(a), int(b), int(c), int(d), int(e), f, g, h, i,  \
                                              j, k, l);                                            \
  }                                                                                                \
  void tandem_rest_cblas_##p##trsm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d,   \
                                   CBLAS_DIAG e, blasint f, blasint g, T h, const T* i, blasint j, \
                                   T* k, blasint l) {                                              \
    record<P + kCblas + kTrsm, Reached::Rest>(int(a), int(b), int(c), int(d), int(e), f, g, h, i,  \
                                              j, k, l);                                            \
  }
extern "C" {
TANDEM_REST(float, s, 0)
TANDEM_REST(double, d, kDouble)
}
#undef TANDEM_REST

namespace {

// OpenBLAS's entries, recorded: the same signatures, as the table's types.
template <class T, int P>
Level3<T> own_recorders() {
  Level3<T> e{};
  e.syrk = [](auto... a) { record<P + kSyrk, Reached::Own>(a...); };
  e.syr2k = [](auto... a) { record<P + kSyr2k, Reached::Own>(a...); };
  e.symm = [](auto... a) { record<P + kSymm, Reached::Own>(a...); };
  e.trmm = [](auto... a) { record<P + kTrmm, Reached::Own>(a...); };
  e.trsm = [](auto... a) { record<P + kTrsm, Reached::Own>(a...); };
  e.cblas_syrk = [](CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, auto... r) {
    record<P + kCblas + kSyrk, Reached::Own>(int(a), int(b), int(c), r...);
  };
  e.cblas_syr2k = [](CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, auto... r) {
    record<P + kCblas + kSyr2k, Reached::Own>(int(a), int(b), int(c), r...);
  };
  e.cblas_symm = [](CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, auto... r) {
    record<P + kCblas + kSymm, Reached::Own>(int(a), int(b), int(c), r...);
  };
  e.cblas_trmm = [](CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d, CBLAS_DIAG f,
                    auto... r) {
    record<P + kCblas + kTrmm, Reached::Own>(int(a), int(b), int(c), int(d), int(f), r...);
  };
  e.cblas_trsm = [](CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d, CBLAS_DIAG f,
                    auto... r) {
    record<P + kCblas + kTrsm, Reached::Own>(int(a), int(b), int(c), int(d), int(f), r...);
  };
  return e;
}

// Publishes the recorders as OpenBLAS's entries with the threshold, as the drop-in does: the
// level-3 entries first, the bound last. `missing` picks entries left out (null), as an OpenBLAS
// without them: each of the 24 with a chance of 1 in `missing` (0: none).
template <class Rng>
void publish(double threshold, Rng& rng, int missing) {
  static const Level3<float> s = own_recorders<float, 0>();
  static const Level3<double> d = own_recorders<double, kDouble>();
  Level3<float> fs = s;
  Level3<double> fd = d;
  auto drop = [&](auto& table) {
    void** entries = reinterpret_cast<void**>(&table);
    for (std::size_t i = 0; i < sizeof table / sizeof(void*); ++i)
      if (missing > 0 && std::uniform_int_distribution<int>(0, missing - 1)(rng) == 0)
        entries[i] = nullptr;
  };
  drop(fs);
  drop(fd);
  tandem_straight.level3_s = fs;
  tandem_straight.level3_d = fd;
  std::uint64_t gemm = 1;  // the GEMM entries are not called here; any non-null value
  for (tandem::detail::Precision p : tandem::detail::kPrecisions)
    straight::publish_gemm(p, &gemm, &gemm);
  straight::publish(threshold);
}

// Arguments on the rule's edges.
struct Draw {
  std::mt19937 rng;
  explicit Draw(unsigned seed) : rng(seed) {}
  template <class V>
  V pick(std::initializer_list<V> values) {
    std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
    return *(values.begin() + d(rng));
  }
  bool one_in(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng) == 0; }
  blasint size() {
    return one_in(4) ? pick<blasint>({std::numeric_limits<blasint>::min(), -1, 0, 1 << 20, 2097151,
                                      2097152, 1 << 30, 2147483647})
                     : pick<blasint>({1, 2, 3, 5, 8, 64, 1000});
  }
  blasint ld(blasint least) {
    if (one_in(8)) return pick<blasint>({-1, 0, 1, 2, 8, 1000, 1 << 21});
    const std::int64_t at = std::max<blasint>(1, least);
    return static_cast<blasint>(std::min<std::int64_t>(
        std::numeric_limits<blasint>::max(), one_in(3) ? at - 1 : at + pick<int>({0, 0, 3})));
  }
  template <class T>
  T scalar() {
    return pick<T>({T(1), T(1), T(-2.5), T(0), T(-0.0), std::numeric_limits<T>::quiet_NaN(),
                    std::numeric_limits<T>::denorm_min()});
  }
  // A threshold, a third of the time at the call's own product or one past it (so that the
  // product is just at or just below the largest that goes straight).
  double threshold(std::int64_t m, std::int64_t n, std::int64_t k) {
    const double product = double(m) * double(n) * double(k);
    if (m > 0 && n > 0 && k > 0 && product < 0x1p53 && one_in(3))
      return product + pick<double>({0.0, 1.0});
    return pick<double>({0.0, 1.0, 8.0, 27.0, 262144.0, 1e9, 1e9, 0x1p63, 1e30});
  }
  // A Fortran option: mostly one of `valid` in either case, else another letter the routines
  // take, or any byte.
  char letter(const char* valid) {
    if (one_in(8)) return static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    if (one_in(8)) return pick<char>({'L', 'l', 'R', 'r', 'U', 'u', 'N', 'n', 'T', 't', 'C', 'c'});
    const char c =
        valid[std::uniform_int_distribution<std::size_t>(0, std::strlen(valid) - 1)(rng)];
    return one_in(2) ? static_cast<char>(c - 'A' + 'a') : c;
  }
  int enumeration(std::initializer_list<int> valid) {
    return one_in(8) ? pick<int>({0, 100, 110, 114, 120, 123, 130, 133, 140, 143, 111 + (1 << 20)})
                     : pick<int>(valid);
  }
  std::uint64_t upper() {
    return one_in(2) ? std::uint64_t(std::uniform_int_distribution<std::uint32_t>()(rng)) << 32 : 0;
  }
  std::uint64_t wide(int v) { return upper() | static_cast<std::uint32_t>(v); }
  // A CBLAS scalar in the low lane of its XMM register, garbage (often NaN) in the others, which
  // the ABI leaves undefined.
  __m128 lanes(float v) {
    std::uniform_int_distribution<std::uint32_t> u;
    return _mm_castsi128_ps(_mm_set_epi32(int(u(rng)), int(u(rng)), int(u(rng)), int(bits(v))));
  }
  __m128d lanes(double v) {
    return _mm_castsi128_pd(
        _mm_set_epi64x(std::int64_t(upper() | upper() >> 32), std::int64_t(bits(v))));
  }
  template <class P>
  P* pointer(P* p) {
    return one_in(12) ? nullptr : p;
  }
};

// A CBLAS scalar's whole XMM register.
template <class T>
struct LanesOf {
  using type = __m128d;
};
template <>
struct LanesOf<float> {
  using type = __m128;
};
template <class T>
using Lanes = typename LanesOf<T>::type;

// An entry called through a signature whose 32-bit integers are 64 bits wide, to pass garbage in
// their upper halves, and whose scalars are whole XMM registers, garbage above the low lane: the
// ABI leaves both undefined.
template <class Wide, class F>
Wide widened(F entry) {
  return reinterpret_cast<Wide>(reinterpret_cast<void*>(entry));
}

float g_sf[2];
double g_df[2];
template <class T>
T* storage() {
  if constexpr (std::is_same_v<T, float>)
    return g_sf;
  else
    return g_df;
}

// CBLAS's enumerations as the column-major call's Fortran characters, as the C++ entries read
// them ('\0' for none).
char uplo_of(int v) { return v == CblasUpper ? 'U' : v == CblasLower ? 'L' : '\0'; }
char side_of(int v) { return v == CblasLeft ? 'L' : v == CblasRight ? 'R' : '\0'; }
char trans_of(int v) {
  return v == CblasNoTrans ? 'N' : v == CblasTrans ? 'T' : v == CblasConjTrans ? 'C' : '\0';
}
char diag_of(int v) { return v == CblasUnit ? 'U' : v == CblasNonUnit ? 'N' : '\0'; }

// A CBLAS call of symm, trmm or trsm as the column-major call the C++ entries check: side and
// uplo flipped, m and n swapped for row-major.
struct ColumnMajor {
  char side, uplo;
  blasint rows, cols;
};
ColumnMajor column_major(bool row, int side, int uplo, blasint m, blasint n) {
  const char sd = side_of(side), ul = uplo_of(uplo);
  if (!row) return {sd, ul, m, n};
  return {sd == 'L' ? 'R' : sd == 'R' ? 'L' : sd, ul == 'U' ? 'L' : ul == 'L' ? 'U' : ul, n, m};
}

// One call's outcome against what the rule says; `what` describes it.
void expect(bool goes, int routine, const std::array<std::uint64_t, 15>& words, int i,
            const std::string& what, int& own) {
  ASSERT_EQ(g_got.to, goes ? Reached::Own : Reached::Rest) << "case " << i << ": " << what;
  ASSERT_EQ(g_got.routine, routine) << "case " << i << ": " << what;
  ASSERT_EQ(g_got.words, words) << "case " << i << ": " << what;
  own += goes;
}

constexpr int kCases = 150000;

template <class T>
constexpr int base() {
  return std::is_same_v<T, float> ? 0 : kDouble;
}

// syrk and syr2k through Fortran and CBLAS.
template <class T>
void check_rank(bool two, unsigned seed) {
  Draw draw(seed);
  const auto e = tandem::detail::blas_entries::resolved<T>();
  int own_f = 0, own_c = 0;
  for (int i = 0; i < kCases; ++i) {
    const blasint n = draw.size(), k = draw.size();
    publish(draw.threshold(n, n, k), draw.rng, 40);
    const std::uint64_t most = straight::most();
    const Level3<T>& table = straight::level3<T>();
    const T alpha = draw.scalar<T>(), beta = draw.scalar<T>();
    const T* a = draw.pointer(storage<T>());
    const T* b = draw.pointer(storage<T>() + 1);
    T* c = draw.pointer(storage<T>());
    const int routine = base<T>() + (two ? kSyr2k : kSyrk);
    // Fortran.
    const char uplo = draw.letter("UL"), trans = draw.letter("NTC");
    const blasint rows = rules::rank_rows(trans, n, k);
    const blasint lda = draw.ld(rows), ldb = draw.ld(rows), ldc = draw.ld(n);
    bool goes = (two ? table.syr2k != nullptr : table.syrk != nullptr) &&
                straight::product_at_most(most, n, n, k) && beta != T(0) &&
                rules::rank_goes(uplo, trans, n, k, alpha, a, lda, two, b, ldb, c, ldc);
    g_got = {};
    const std::string what = "uplo " + std::to_string(int(uplo)) + " trans " +
                             std::to_string(int(trans)) + " n " + std::to_string(n) + " k " +
                             std::to_string(k) + " lda " + std::to_string(lda) + " ldb " +
                             std::to_string(ldb) + " ldc " + std::to_string(ldc) + " alpha " +
                             std::to_string(alpha) + " beta " + std::to_string(beta);
    if (two) {
      e.syr2k(&uplo, &trans, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
      const T *pa = &alpha, *pb = &beta;
      expect(goes, routine,
             {bits(&uplo), bits(&trans), bits(&n), bits(&k), bits(pa), bits(a), bits(&lda), bits(b),
              bits(&ldb), bits(pb), bits(c), bits(&ldc), 0, 0, 0},
             i, "Fortran " + what, own_f);
    } else {
      e.syrk(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc);
      const T *pa = &alpha, *pb = &beta;
      expect(goes, routine,
             {bits(&uplo), bits(&trans), bits(&n), bits(&k), bits(pa), bits(a), bits(&lda),
              bits(pb), bits(c), bits(&ldc), 0, 0, 0, 0, 0},
             i, "Fortran " + what, own_f);
    }
    if (::testing::Test::HasFatalFailure()) return;
    // CBLAS, with the same sizes: the layout decides which rule its leading dimensions meet.
    const int order = draw.enumeration({CblasRowMajor, CblasColMajor});
    const int e_uplo = draw.enumeration({CblasUpper, CblasLower});
    const int e_trans = draw.enumeration({CblasNoTrans, CblasTrans, CblasConjTrans});
    const bool row = order == CblasRowMajor;
    char ul = uplo_of(e_uplo), tr = trans_of(e_trans);
    if (row) ul = ul == 'U' ? 'L' : ul == 'L' ? 'U' : ul, tr = tr == 'N' ? 'T' : tr ? 'N' : tr;
    const blasint crows = rules::rank_rows(tr, n, k);
    const blasint clda = draw.ld(crows), cldb = draw.ld(crows), cldc = draw.ld(n);
    goes = (two ? table.cblas_syr2k != nullptr : table.cblas_syrk != nullptr) &&
           straight::product_at_most(most, n, n, k) && beta != T(0) &&
           (row || order == CblasColMajor) &&
           rules::rank_goes(ul, tr, n, k, alpha, a, clda, two, b, cldb, c, cldc);
    g_got = {};
    const std::string cwhat = "order " + std::to_string(order) + " uplo " + std::to_string(e_uplo) +
                              " trans " + std::to_string(e_trans) + " n " + std::to_string(n) +
                              " k " + std::to_string(k) + " lda " + std::to_string(clda) + " ldb " +
                              std::to_string(cldb) + " ldc " + std::to_string(cldc);
    using W = std::uint64_t;
    if (two) {
      widened<void (*)(W, W, W, W, W, Lanes<T>, const T*, W, const T*, W, Lanes<T>, T*, W)>(
          e.cblas_syr2k)(draw.wide(order), draw.wide(e_uplo), draw.wide(e_trans), draw.wide(n),
                         draw.wide(k), draw.lanes(alpha), a, draw.wide(clda), b, draw.wide(cldb),
                         draw.lanes(beta), c, draw.wide(cldc));
      expect(goes, routine + kCblas,
             {bits(order), bits(e_uplo), bits(e_trans), bits(n), bits(k), bits(alpha), bits(a),
              bits(clda), bits(b), bits(cldb), bits(beta), bits(c), bits(cldc), 0, 0},
             i, "CBLAS " + cwhat, own_c);
    } else {
      widened<void (*)(W, W, W, W, W, Lanes<T>, const T*, W, Lanes<T>, T*, W)>(e.cblas_syrk)(
          draw.wide(order), draw.wide(e_uplo), draw.wide(e_trans), draw.wide(n), draw.wide(k),
          draw.lanes(alpha), a, draw.wide(clda), draw.lanes(beta), c, draw.wide(cldc));
      expect(goes, routine + kCblas,
             {bits(order), bits(e_uplo), bits(e_trans), bits(n), bits(k), bits(alpha), bits(a),
              bits(clda), bits(beta), bits(c), bits(cldc), 0, 0, 0, 0},
             i, "CBLAS " + cwhat, own_c);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(own_f, kCases / 100);
  EXPECT_GT(own_c, kCases / 100);
}

// symm through Fortran and CBLAS.
template <class T>
void check_symm(unsigned seed) {
  Draw draw(seed);
  const auto e = tandem::detail::blas_entries::resolved<T>();
  int own_f = 0, own_c = 0;
  const int routine = base<T>() + kSymm;
  for (int i = 0; i < kCases; ++i) {
    const blasint m = draw.size(), n = draw.size();
    publish(draw.threshold(m, n, draw.one_in(2) ? m : n), draw.rng, 40);
    const std::uint64_t most = straight::most();
    const Level3<T>& table = straight::level3<T>();
    const T alpha = draw.scalar<T>(), beta = draw.scalar<T>();
    const T* a = draw.pointer(storage<T>());
    const T* b = draw.pointer(storage<T>() + 1);
    T* c = draw.pointer(storage<T>());
    const char side = draw.letter("LR"), uplo = draw.letter("UL");
    const blasint order = rules::side_order(side, m, n);
    const blasint lda = draw.ld(order), ldb = draw.ld(m), ldc = draw.ld(m);
    bool goes = table.symm != nullptr && straight::product_at_most(most, m, n, order) &&
                beta != T(0) && rules::symm_goes(side, uplo, m, n, alpha, a, lda, b, ldb, c, ldc);
    g_got = {};
    e.symm(&side, &uplo, &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    const T *pa = &alpha, *pb = &beta;
    expect(goes, routine,
           {bits(&side), bits(&uplo), bits(&m), bits(&n), bits(pa), bits(a), bits(&lda), bits(b),
            bits(&ldb), bits(pb), bits(c), bits(&ldc), 0, 0, 0},
           i,
           "Fortran side " + std::to_string(int(side)) + " uplo " + std::to_string(int(uplo)) +
               " m " + std::to_string(m) + " n " + std::to_string(n) + " lda " +
               std::to_string(lda) + " ldb " + std::to_string(ldb) + " ldc " + std::to_string(ldc),
           own_f);
    if (::testing::Test::HasFatalFailure()) return;
    const int layout = draw.enumeration({CblasRowMajor, CblasColMajor});
    const int e_side = draw.enumeration({CblasLeft, CblasRight});
    const int e_uplo = draw.enumeration({CblasUpper, CblasLower});
    const bool row = layout == CblasRowMajor;
    const auto [sd, ul, rows, cols] = column_major(row, e_side, e_uplo, m, n);
    const blasint corder = rules::side_order(sd, rows, cols);
    const blasint clda = draw.ld(corder), cldb = draw.ld(rows), cldc = draw.ld(rows);
    goes = table.cblas_symm != nullptr && straight::product_at_most(most, rows, cols, corder) &&
           beta != T(0) && (row || layout == CblasColMajor) &&
           rules::symm_goes(sd, ul, rows, cols, alpha, a, clda, b, cldb, c, cldc);
    g_got = {};
    using W = std::uint64_t;
    widened<void (*)(W, W, W, W, W, Lanes<T>, const T*, W, const T*, W, Lanes<T>, T*, W)>(
        e.cblas_symm)(draw.wide(layout), draw.wide(e_side), draw.wide(e_uplo), draw.wide(m),
                      draw.wide(n), draw.lanes(alpha), a, draw.wide(clda), b, draw.wide(cldb),
                      draw.lanes(beta), c, draw.wide(cldc));
    expect(goes, routine + kCblas,
           {bits(layout), bits(e_side), bits(e_uplo), bits(m), bits(n), bits(alpha), bits(a),
            bits(clda), bits(b), bits(cldb), bits(beta), bits(c), bits(cldc), 0, 0},
           i,
           "CBLAS layout " + std::to_string(layout) + " side " + std::to_string(e_side) + " uplo " +
               std::to_string(e_uplo) + " m " + std::to_string(m) + " n " + std::to_string(n) +
               " lda " + std::to_string(clda) + " ldb " + std::to_string(cldb) + " ldc " +
               std::to_string(cldc),
           own_c);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(own_f, kCases / 100);
  EXPECT_GT(own_c, kCases / 100);
}

// trmm and trsm through Fortran and CBLAS.
template <class T>
void check_triangle(bool solve, unsigned seed) {
  Draw draw(seed);
  const auto e = tandem::detail::blas_entries::resolved<T>();
  int own_f = 0, own_c = 0;
  const int routine = base<T>() + (solve ? kTrsm : kTrmm);
  for (int i = 0; i < kCases; ++i) {
    const blasint m = draw.size(), n = draw.size();
    publish(draw.threshold(m, n, draw.one_in(2) ? m : n), draw.rng, 40);
    const std::uint64_t most = straight::most();
    const Level3<T>& table = straight::level3<T>();
    const T alpha = draw.scalar<T>();
    const T* a = draw.pointer(storage<T>());
    T* b = draw.pointer(storage<T>() + 1);
    const char side = draw.letter("LR"), uplo = draw.letter("UL"), trans = draw.letter("NTC"),
               diag = draw.letter("UN");
    const blasint order = rules::side_order(side, m, n);
    const blasint lda = draw.ld(order), ldb = draw.ld(m);
    bool goes = (solve ? table.trsm != nullptr : table.trmm != nullptr) &&
                straight::product_at_most(most, m, n, order) &&
                rules::triangle_goes(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
    g_got = {};
    (solve ? e.trsm : e.trmm)(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb);
    const T* pa = &alpha;
    expect(goes, routine,
           {bits(&side), bits(&uplo), bits(&trans), bits(&diag), bits(&m), bits(&n), bits(pa),
            bits(a), bits(&lda), bits(b), bits(&ldb), 0, 0, 0, 0},
           i,
           "Fortran side " + std::to_string(int(side)) + " uplo " + std::to_string(int(uplo)) +
               " trans " + std::to_string(int(trans)) + " diag " + std::to_string(int(diag)) +
               " m " + std::to_string(m) + " n " + std::to_string(n) + " lda " +
               std::to_string(lda) + " ldb " + std::to_string(ldb),
           own_f);
    if (::testing::Test::HasFatalFailure()) return;
    const int layout = draw.enumeration({CblasRowMajor, CblasColMajor});
    const int e_side = draw.enumeration({CblasLeft, CblasRight});
    const int e_uplo = draw.enumeration({CblasUpper, CblasLower});
    const int e_trans = draw.enumeration({CblasNoTrans, CblasTrans, CblasConjTrans});
    const int e_diag = draw.enumeration({CblasUnit, CblasNonUnit});
    const bool row = layout == CblasRowMajor;
    const auto [sd, ul, rows, cols] = column_major(row, e_side, e_uplo, m, n);
    const blasint corder = rules::side_order(sd, rows, cols);
    const blasint clda = draw.ld(corder), cldb = draw.ld(rows);
    goes = (solve ? table.cblas_trsm != nullptr : table.cblas_trmm != nullptr) &&
           straight::product_at_most(most, rows, cols, corder) &&
           (row || layout == CblasColMajor) &&
           rules::triangle_goes(sd, ul, trans_of(e_trans), diag_of(e_diag), rows, cols, alpha, a,
                                clda, b, cldb);
    g_got = {};
    using W = std::uint64_t;
    widened<void (*)(W, W, W, W, W, W, W, Lanes<T>, const T*, W, T*, W)>(solve ? e.cblas_trsm
                                                                               : e.cblas_trmm)(
        draw.wide(layout), draw.wide(e_side), draw.wide(e_uplo), draw.wide(e_trans),
        draw.wide(e_diag), draw.wide(m), draw.wide(n), draw.lanes(alpha), a, draw.wide(clda), b,
        draw.wide(cldb));
    expect(goes, routine + kCblas,
           {bits(layout), bits(e_side), bits(e_uplo), bits(e_trans), bits(e_diag), bits(m), bits(n),
            bits(alpha), bits(a), bits(clda), bits(b), bits(cldb), 0, 0, 0},
           i,
           "CBLAS layout " + std::to_string(layout) + " side " + std::to_string(e_side) + " uplo " +
               std::to_string(e_uplo) + " trans " + std::to_string(e_trans) + " diag " +
               std::to_string(e_diag) + " m " + std::to_string(m) + " n " + std::to_string(n) +
               " lda " + std::to_string(clda) + " ldb " + std::to_string(cldb),
           own_c);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(own_f, kCases / 100);
  EXPECT_GT(own_c, kCases / 100);
}

TEST(StraightLevel3, SyrkFollowsTheRule) {
  check_rank<float>(false, 1);
  check_rank<double>(false, 2);
}
TEST(StraightLevel3, Syr2kFollowsTheRule) {
  check_rank<float>(true, 3);
  check_rank<double>(true, 4);
}
TEST(StraightLevel3, SymmFollowsTheRule) {
  check_symm<float>(5);
  check_symm<double>(6);
}
TEST(StraightLevel3, TrmmFollowsTheRule) {
  check_triangle<float>(false, 7);
  check_triangle<double>(false, 8);
}
TEST(StraightLevel3, TrsmFollowsTheRule) {
  check_triangle<float>(true, 9);
  check_triangle<double>(true, 10);
}

}  // namespace
