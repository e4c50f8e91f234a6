// The drop-in's assembly entries for syrk, syr2k, symm, trmm and trsm in every precision, and hemm,
// herk and her2k in c and z (src/blas3/dropin/straight_x86_64.S), against the C++ rule of
// src/blas3/dropin/level3_entries.cpp (src/blas3/level3_rules.hpp and the threshold, a complex
// product's work counted 4 m n k), less its one extra case: a call with beta = 0 goes to the C++
// entry, which zeroes C first. Linked into straight_test with the assembly and the table alone,
// recorders standing in for OpenBLAS's entries (published in the table) and for the C++ entries
// (tandem_rest_*). Each of many calls per entry, with arguments on every edge of the rule (sizes
// around 0 and up to INT_MAX, products at and just past the threshold, leading dimensions one
// short, any option byte or enumeration, the transposes each routine refuses, both layouts and
// invalid ones, NULL operands, alpha and beta 0, -0, NaN and denormal, each part of a complex one,
// entries missing from the table, garbage in the upper halves of the CBLAS entries' 32-bit
// arguments and above the low lane of their scalars' XMM registers), must reach exactly the one
// the rule names, with every argument as the caller passed it (a scalar CBLAS passes by address:
// that address).
#include <cblas.h>
#include <gtest/gtest.h>
#include <immintrin.h>

#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "base/precision.hpp"
#include "blas3/dropin/blas_entries.hpp"
#include "blas3/dropin/straight.hpp"
#include "blas3/level3_rules.hpp"

namespace {

namespace straight = tandem::detail::dropin::straight;
namespace rules = tandem::detail::level3_rules;
using tandem::detail::blas_entries::Hermitian;
using tandem::detail::blas_entries::Level3;
using Complex = std::complex<float>;
using DoubleComplex = std::complex<double>;

// cblas.h's types for T's scalars and matrices (a complex type's by address), and T's real type.
using tandem::detail::blas_entries::CblasIn;
using tandem::detail::blas_entries::CblasOut;
using tandem::detail::blas_entries::CblasScalar;
template <class T>
using Real = tandem::detail::real_type_t<T>;
template <class T>
constexpr bool kComplex = tandem::detail::is_complex(tandem::detail::precision_of<T>());

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

// A recorder: the routine's number (below) and whether it stands for OpenBLAS's entry or the C++
// one.
template <int Routine, Reached To, class... Args>
void record(Args... args) {
  g_got.to = To;
  g_got.routine = Routine;
  g_got.words = {};
  std::size_t i = 0;
  ((g_got.words[i++] = bits(args)), ...);
}

// A routine's number: its place, plus kCblas for its CBLAS entry, plus its precision's base.
constexpr int kSyrk = 1, kSyr2k = 2, kSymm = 3, kTrmm = 4, kTrsm = 5, kHemm = 6, kHerk = 7,
              kHer2k = 8, kCblas = 10;
template <class T>
constexpr int base() {
  return 20 * tandem::detail::index_of(tandem::detail::precision_of<T>());
}

}  // namespace

// The C++ entries the assembly falls back to, recorded.
#define TANDEM_REST(T, p)                                                                          \
  void tandem_rest_##p##syrk_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const T* e, const T* f, const blasint* g, const T* h, T* i,          \
                              const blasint* j) {                                                  \
    record<base<T>() + kSyrk, Reached::Rest>(a, b, c, d, e, f, g, h, i, j);                        \
  }                                                                                                \
  void tandem_rest_##p##syr2k_(const char* a, const char* b, const blasint* c, const blasint* d,   \
                               const T* e, const T* f, const blasint* g, const T* h,               \
                               const blasint* i, const T* j, T* k, const blasint* l) {             \
    record<base<T>() + kSyr2k, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                 \
  }                                                                                                \
  void tandem_rest_##p##symm_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const T* e, const T* f, const blasint* g, const T* h,                \
                              const blasint* i, const T* j, T* k, const blasint* l) {              \
    record<base<T>() + kSymm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                  \
  }                                                                                                \
  void tandem_rest_##p##trmm_(const char* a, const char* b, const char* c, const char* d,          \
                              const blasint* e, const blasint* f, const T* g, const T* h,          \
                              const blasint* i, T* j, const blasint* k) {                          \
    record<base<T>() + kTrmm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k);                     \
  }                                                                                                \
  void tandem_rest_##p##trsm_(const char* a, const char* b, const char* c, const char* d,          \
                              const blasint* e, const blasint* f, const T* g, const T* h,          \
                              const blasint* i, T* j, const blasint* k) {                          \
    record<base<T>() + kTrsm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k);                     \
  }                                                                                                \
  void tandem_rest_cblas_##p##syrk(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,      \
                                   blasint e, CblasScalar<T> f, CblasIn<T> g, blasint h,           \
                                   CblasScalar<T> i, CblasOut<T> j, blasint k) {                   \
    record<base<T>() + kCblas + kSyrk, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, \
                                                      k);                                          \
  }                                                                                                \
  void tandem_rest_cblas_##p##syr2k(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,     \
                                    blasint e, CblasScalar<T> f, CblasIn<T> g, blasint h,          \
                                    CblasIn<T> i, blasint j, CblasScalar<T> k, CblasOut<T> l,      \
                                    blasint m) {                                                   \
    record<base<T>() + kCblas + kSyr2k, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i,   \
                                                       j, k, l, m);                                \
  }                                                                                                \
  void tandem_rest_cblas_##p##symm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, blasint d,           \
                                   blasint e, CblasScalar<T> f, CblasIn<T> g, blasint h,           \
                                   CblasIn<T> i, blasint j, CblasScalar<T> k, CblasOut<T> l,       \
                                   blasint m) {                                                    \
    record<base<T>() + kCblas + kSymm, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, \
                                                      k, l, m);                                    \
  }                                                                                                \
  void tandem_rest_cblas_##p##trmm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d,   \
                                   CBLAS_DIAG e, blasint f, blasint g, CblasScalar<T> h,           \
                                   CblasIn<T> i, blasint j, CblasOut<T> k, blasint l) {            \
    record<base<T>() + kCblas + kTrmm, Reached::Rest>(int(a), int(b), int(c), int(d), int(e), f,   \
                                                      g, h, i, j, k, l);                           \
  }                                                                                                \
  void tandem_rest_cblas_##p##trsm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, CBLAS_TRANSPOSE d,   \
                                   CBLAS_DIAG e, blasint f, blasint g, CblasScalar<T> h,           \
                                   CblasIn<T> i, blasint j, CblasOut<T> k, blasint l) {            \
    record<base<T>() + kCblas + kTrsm, Reached::Rest>(int(a), int(b), int(c), int(d), int(e), f,   \
                                                      g, h, i, j, k, l);                           \
  }
// hemm has symm's arguments; herk takes a real alpha and beta, her2k a real beta.
#define TANDEM_HERMITIAN_REST(T, p)                                                                \
  void tandem_rest_##p##hemm_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const T* e, const T* f, const blasint* g, const T* h,                \
                              const blasint* i, const T* j, T* k, const blasint* l) {              \
    record<base<T>() + kHemm, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                  \
  }                                                                                                \
  void tandem_rest_##p##herk_(const char* a, const char* b, const blasint* c, const blasint* d,    \
                              const Real<T>* e, const T* f, const blasint* g, const Real<T>* h,    \
                              T* i, const blasint* j) {                                            \
    record<base<T>() + kHerk, Reached::Rest>(a, b, c, d, e, f, g, h, i, j);                        \
  }                                                                                                \
  void tandem_rest_##p##her2k_(const char* a, const char* b, const blasint* c, const blasint* d,   \
                               const T* e, const T* f, const blasint* g, const T* h,               \
                               const blasint* i, const Real<T>* j, T* k, const blasint* l) {       \
    record<base<T>() + kHer2k, Reached::Rest>(a, b, c, d, e, f, g, h, i, j, k, l);                 \
  }                                                                                                \
  void tandem_rest_cblas_##p##hemm(CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, blasint d,           \
                                   blasint e, const void* f, const void* g, blasint h,             \
                                   const void* i, blasint j, const void* k, void* l, blasint m) {  \
    record<base<T>() + kCblas + kHemm, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, \
                                                      k, l, m);                                    \
  }                                                                                                \
  void tandem_rest_cblas_##p##herk(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,      \
                                   blasint e, Real<T> f, const void* g, blasint h, Real<T> i,      \
                                   void* j, blasint k) {                                           \
    record<base<T>() + kCblas + kHerk, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i, j, \
                                                      k);                                          \
  }                                                                                                \
  void tandem_rest_cblas_##p##her2k(CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, blasint d,     \
                                    blasint e, const void* f, const void* g, blasint h,            \
                                    const void* i, blasint j, Real<T> k, void* l, blasint m) {     \
    record<base<T>() + kCblas + kHer2k, Reached::Rest>(int(a), int(b), int(c), d, e, f, g, h, i,   \
                                                       j, k, l, m);                                \
  }
extern "C" {
TANDEM_REST(float, s)
TANDEM_REST(double, d)
TANDEM_REST(Complex, c)
TANDEM_REST(DoubleComplex, z)
TANDEM_HERMITIAN_REST(Complex, c)
TANDEM_HERMITIAN_REST(DoubleComplex, z)
}
#undef TANDEM_HERMITIAN_REST
#undef TANDEM_REST

namespace {

// OpenBLAS's entries, recorded: the same signatures, as the table's types.
template <class T>
Level3<T> own_recorders() {
  constexpr int P = base<T>();
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
template <class T>
Hermitian<T> own_hermitian_recorders() {
  constexpr int P = base<T>();
  Hermitian<T> e{};
  e.hemm = [](auto... a) { record<P + kHemm, Reached::Own>(a...); };
  e.herk = [](auto... a) { record<P + kHerk, Reached::Own>(a...); };
  e.her2k = [](auto... a) { record<P + kHer2k, Reached::Own>(a...); };
  e.cblas_hemm = [](CBLAS_ORDER a, CBLAS_SIDE b, CBLAS_UPLO c, auto... r) {
    record<P + kCblas + kHemm, Reached::Own>(int(a), int(b), int(c), r...);
  };
  e.cblas_herk = [](CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, auto... r) {
    record<P + kCblas + kHerk, Reached::Own>(int(a), int(b), int(c), r...);
  };
  e.cblas_her2k = [](CBLAS_ORDER a, CBLAS_UPLO b, CBLAS_TRANSPOSE c, auto... r) {
    record<P + kCblas + kHer2k, Reached::Own>(int(a), int(b), int(c), r...);
  };
  return e;
}

// Publishes the recorders as OpenBLAS's entries with the threshold, as the drop-in does: the
// level-3 entries first, the bound last. `missing` picks entries left out (null), as an OpenBLAS
// without them: each with a chance of 1 in `missing` (0: none).
template <class Rng>
void publish(double threshold, Rng& rng, int missing) {
  static const Level3<float> s = own_recorders<float>();
  static const Level3<double> d = own_recorders<double>();
  static const Level3<Complex> c = own_recorders<Complex>();
  static const Level3<DoubleComplex> z = own_recorders<DoubleComplex>();
  static const Hermitian<Complex> hc = own_hermitian_recorders<Complex>();
  static const Hermitian<DoubleComplex> hz = own_hermitian_recorders<DoubleComplex>();
  auto dropped = [&](auto table) {
    void** entries = reinterpret_cast<void**>(&table);
    for (std::size_t i = 0; i < sizeof table / sizeof(void*); ++i)
      if (missing > 0 && std::uniform_int_distribution<int>(0, missing - 1)(rng) == 0)
        entries[i] = nullptr;
    return table;
  };
  tandem_straight.level3_s = dropped(s);
  tandem_straight.level3_d = dropped(d);
  tandem_straight.level3_c = dropped(c);
  tandem_straight.level3_z = dropped(z);
  tandem_straight.hermitian_c = dropped(hc);
  tandem_straight.hermitian_z = dropped(hz);
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
  // A scalar; a complex one's parts drawn apart (0 only when both are).
  template <class T>
  T scalar() {
    if constexpr (kComplex<T>)
      return T(scalar<Real<T>>(), scalar<Real<T>>());
    else
      return pick<T>({T(1), T(1), T(-2.5), T(0), T(-0.0), std::numeric_limits<T>::quiet_NaN(),
                      std::numeric_limits<T>::denorm_min()});
  }
  // A threshold, a third of the time at the call's own work (w per multiply-add) or one past it
  // (so that the work is just at or just below the largest that goes straight).
  double threshold(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t w) {
    const double work = double(m) * double(n) * double(k) * double(w);
    if (m > 0 && n > 0 && k > 0 && work < 0x1p53 && one_in(3))
      return work + pick<double>({0.0, 1.0});
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

// How a CBLAS entry takes a scalar of type S: a real one as a whole XMM register (garbage above
// the low lane), a complex one by address. `recorded` is what its recorder sees.
template <class S>
struct Pass {
  using type = decltype(std::declval<Draw&>().lanes(std::declval<S>()));
  static type arg(Draw& d, const S& v) { return d.lanes(v); }
  static S recorded(const S& v) { return v; }
};
template <class R>
struct Pass<std::complex<R>> {
  using type = const void*;
  static type arg(Draw&, const std::complex<R>& v) { return &v; }
  static type recorded(const std::complex<R>& v) { return &v; }
};

// An entry called through a signature whose 32-bit integers are 64 bits wide, to pass garbage in
// their upper halves, and whose real scalars are whole XMM registers, garbage above the low lane:
// the ABI leaves both undefined.
template <class Wide, class F>
Wide widened(F entry) {
  return reinterpret_cast<Wide>(reinterpret_cast<void*>(entry));
}

template <class T>
T* storage() {
  static T s[2];
  return s;
}

template <class V>
std::string text(const V& v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// CBLAS's enumerations as the column-major call's Fortran characters, as the C++ entries read
// them ('\0' for none).
char uplo_of(int v) { return v == CblasUpper ? 'U' : v == CblasLower ? 'L' : '\0'; }
char side_of(int v) { return v == CblasLeft ? 'L' : v == CblasRight ? 'R' : '\0'; }
char trans_of(int v) {
  return v == CblasNoTrans ? 'N' : v == CblasTrans ? 'T' : v == CblasConjTrans ? 'C' : '\0';
}
char diag_of(int v) { return v == CblasUnit ? 'U' : v == CblasNonUnit ? 'N' : '\0'; }
char flip_uplo(char c) { return c == 'U' ? 'L' : c == 'L' ? 'U' : c; }
// A row-major rank update's transpose as the column-major call's (the C++ entries' flip_trans):
// N and the routine's mirror (T, or C for herk and her2k) trade places, a real C is its T, and
// anything else stays for the rule to refuse.
char flip_trans(bool hermitian, bool complex, char c) {
  const char mirror = hermitian ? 'C' : 'T';
  if (c == 'N') return mirror;
  if (c == mirror || (c == 'C' && !complex)) return 'N';
  return c;
}

// A CBLAS call of symm, hemm, trmm or trsm as the column-major call the C++ entries check: side
// and uplo flipped, m and n swapped for row-major.
struct ColumnMajor {
  char side, uplo;
  blasint rows, cols;
};
ColumnMajor column_major(bool row, int side, int uplo, blasint m, blasint n) {
  const char sd = side_of(side), ul = uplo_of(uplo);
  if (!row) return {sd, ul, m, n};
  return {sd == 'L' ? 'R' : sd == 'R' ? 'L' : sd, flip_uplo(ul), n, m};
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

// The largest m n k that goes straight for T under the table's bound (a complex product's work is
// 4 m n k).
template <class T>
std::uint64_t most_product() {
  return straight::most() / straight::kWorkPerMultiplyAdd<T>;
}

// A rank update's entries (the linked assembly's) and whether the published table has OpenBLAS's:
// syrk and syr2k (`Two`), or herk and her2k (`Herm`).
template <class T, bool Two, bool Herm>
auto rank_entries() {
  if constexpr (Herm) {
    const auto h = tandem::detail::blas_entries::resolved_hermitian<T>();
    if constexpr (Two)
      return std::pair(h.her2k, h.cblas_her2k);
    else
      return std::pair(h.herk, h.cblas_herk);
  } else {
    const auto l = tandem::detail::blas_entries::resolved<T>();
    if constexpr (Two)
      return std::pair(l.syr2k, l.cblas_syr2k);
    else
      return std::pair(l.syrk, l.cblas_syrk);
  }
}
template <class T, bool Two, bool Herm>
std::pair<bool, bool> rank_published() {
  if constexpr (Herm) {
    const auto& h = straight::hermitian<T>();
    return Two ? std::pair(h.her2k != nullptr, h.cblas_her2k != nullptr)
               : std::pair(h.herk != nullptr, h.cblas_herk != nullptr);
  } else {
    const auto& l = straight::level3<T>();
    return Two ? std::pair(l.syr2k != nullptr, l.cblas_syr2k != nullptr)
               : std::pair(l.syrk != nullptr, l.cblas_syrk != nullptr);
  }
}

// syrk and syr2k (`Two`), herk and her2k (`Herm`: a real beta, and herk's alpha real) through
// Fortran and CBLAS.
template <class T, bool Two, bool Herm>
void check_rank(unsigned seed) {
  using A = std::conditional_t<Herm && !Two, Real<T>, T>;
  using B = std::conditional_t<Herm, Real<T>, T>;
  Draw draw(seed);
  const auto [fortran, cblas] = rank_entries<T, Two, Herm>();
  const int routine = base<T>() + (Herm ? (Two ? kHer2k : kHerk) : (Two ? kSyr2k : kSyrk));
  int own_f = 0, own_c = 0;
  for (int i = 0; i < kCases; ++i) {
    const blasint n = draw.size(), k = draw.size();
    publish(draw.threshold(n, n, k, straight::kWorkPerMultiplyAdd<T>), draw.rng, 40);
    const std::uint64_t most = most_product<T>();
    const auto [f_published, c_published] = rank_published<T, Two, Herm>();
    const A alpha = draw.scalar<A>();
    const B beta = draw.scalar<B>();
    const T* a = draw.pointer(storage<T>());
    const T* b = draw.pointer(storage<T>() + 1);
    T* c = draw.pointer(storage<T>());
    // Fortran.
    const char uplo = draw.letter("UL"), trans = draw.letter("NTC");
    const blasint rows = rules::rank_rows(trans, n, k);
    const blasint lda = draw.ld(rows), ldb = draw.ld(rows), ldc = draw.ld(n);
    bool goes = f_published && straight::product_at_most(most, n, n, k) && beta != B(0) &&
                rules::rank_goes<Herm>(uplo, trans, n, k, alpha, a, lda, Two, b, ldb, c, ldc);
    g_got = {};
    const std::string what = "uplo " + std::to_string(int(uplo)) + " trans " +
                             std::to_string(int(trans)) + " n " + std::to_string(n) + " k " +
                             std::to_string(k) + " lda " + std::to_string(lda) + " ldb " +
                             std::to_string(ldb) + " ldc " + std::to_string(ldc) + " alpha " +
                             text(alpha) + " beta " + text(beta);
    const A* pa = &alpha;
    const B* pb = &beta;
    if constexpr (Two) {
      fortran(&uplo, &trans, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
      expect(goes, routine,
             {bits(&uplo), bits(&trans), bits(&n), bits(&k), bits(pa), bits(a), bits(&lda), bits(b),
              bits(&ldb), bits(pb), bits(c), bits(&ldc), 0, 0, 0},
             i, "Fortran " + what, own_f);
    } else {
      fortran(&uplo, &trans, &n, &k, &alpha, a, &lda, &beta, c, &ldc);
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
    if (row) ul = flip_uplo(ul), tr = flip_trans(Herm, kComplex<T>, tr);
    const blasint crows = rules::rank_rows(tr, n, k);
    const blasint clda = draw.ld(crows), cldb = draw.ld(crows), cldc = draw.ld(n);
    goes = c_published && straight::product_at_most(most, n, n, k) && beta != B(0) &&
           (row || order == CblasColMajor) &&
           rules::rank_goes<Herm>(ul, tr, n, k, alpha, a, clda, Two, b, cldb, c, cldc);
    g_got = {};
    const std::string cwhat = "order " + std::to_string(order) + " uplo " + std::to_string(e_uplo) +
                              " trans " + std::to_string(e_trans) + " n " + std::to_string(n) +
                              " k " + std::to_string(k) + " lda " + std::to_string(clda) + " ldb " +
                              std::to_string(cldb) + " ldc " + std::to_string(cldc);
    using W = std::uint64_t;
    using PA = Pass<A>;
    using PB = Pass<B>;
    if constexpr (Two) {
      widened<void (*)(W, W, W, W, W, typename PA::type, CblasIn<T>, W, CblasIn<T>, W,
                       typename PB::type, CblasOut<T>, W)>(cblas)(
          draw.wide(order), draw.wide(e_uplo), draw.wide(e_trans), draw.wide(n), draw.wide(k),
          PA::arg(draw, alpha), a, draw.wide(clda), b, draw.wide(cldb), PB::arg(draw, beta), c,
          draw.wide(cldc));
      expect(goes, routine + kCblas,
             {bits(order), bits(e_uplo), bits(e_trans), bits(n), bits(k), bits(PA::recorded(alpha)),
              bits(a), bits(clda), bits(b), bits(cldb), bits(PB::recorded(beta)), bits(c),
              bits(cldc), 0, 0},
             i, "CBLAS " + cwhat, own_c);
    } else {
      widened<void (*)(W, W, W, W, W, typename PA::type, CblasIn<T>, W, typename PB::type,
                       CblasOut<T>, W)>(cblas)(
          draw.wide(order), draw.wide(e_uplo), draw.wide(e_trans), draw.wide(n), draw.wide(k),
          PA::arg(draw, alpha), a, draw.wide(clda), PB::arg(draw, beta), c, draw.wide(cldc));
      expect(goes, routine + kCblas,
             {bits(order), bits(e_uplo), bits(e_trans), bits(n), bits(k), bits(PA::recorded(alpha)),
              bits(a), bits(clda), bits(PB::recorded(beta)), bits(c), bits(cldc), 0, 0, 0, 0},
             i, "CBLAS " + cwhat, own_c);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(own_f, kCases / 100);
  EXPECT_GT(own_c, kCases / 100);
}

// symm, or hemm (`Herm`), through Fortran and CBLAS.
template <class T, bool Herm>
void check_multiply(unsigned seed) {
  Draw draw(seed);
  const auto [fortran, cblas] = [] {
    if constexpr (Herm) {
      const auto h = tandem::detail::blas_entries::resolved_hermitian<T>();
      return std::pair(h.hemm, h.cblas_hemm);
    } else {
      const auto l = tandem::detail::blas_entries::resolved<T>();
      return std::pair(l.symm, l.cblas_symm);
    }
  }();
  int own_f = 0, own_c = 0;
  const int routine = base<T>() + (Herm ? kHemm : kSymm);
  for (int i = 0; i < kCases; ++i) {
    const blasint m = draw.size(), n = draw.size();
    publish(draw.threshold(m, n, draw.one_in(2) ? m : n, straight::kWorkPerMultiplyAdd<T>),
            draw.rng, 40);
    const std::uint64_t most = most_product<T>();
    bool f_published = false, c_published = false;
    if constexpr (Herm)
      f_published = straight::hermitian<T>().hemm != nullptr,
      c_published = straight::hermitian<T>().cblas_hemm != nullptr;
    else
      f_published = straight::level3<T>().symm != nullptr,
      c_published = straight::level3<T>().cblas_symm != nullptr;
    const T alpha = draw.scalar<T>(), beta = draw.scalar<T>();
    const T* a = draw.pointer(storage<T>());
    const T* b = draw.pointer(storage<T>() + 1);
    T* c = draw.pointer(storage<T>());
    const char side = draw.letter("LR"), uplo = draw.letter("UL");
    const blasint order = rules::side_order(side, m, n);
    const blasint lda = draw.ld(order), ldb = draw.ld(m), ldc = draw.ld(m);
    bool goes = f_published && straight::product_at_most(most, m, n, order) && beta != T(0) &&
                rules::symm_goes(side, uplo, m, n, alpha, a, lda, b, ldb, c, ldc);
    g_got = {};
    fortran(&side, &uplo, &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    const T *pa = &alpha, *pb = &beta;
    expect(goes, routine,
           {bits(&side), bits(&uplo), bits(&m), bits(&n), bits(pa), bits(a), bits(&lda), bits(b),
            bits(&ldb), bits(pb), bits(c), bits(&ldc), 0, 0, 0},
           i,
           "Fortran side " + std::to_string(int(side)) + " uplo " + std::to_string(int(uplo)) +
               " m " + std::to_string(m) + " n " + std::to_string(n) + " lda " +
               std::to_string(lda) + " ldb " + std::to_string(ldb) + " ldc " + std::to_string(ldc) +
               " alpha " + text(alpha) + " beta " + text(beta),
           own_f);
    if (::testing::Test::HasFatalFailure()) return;
    const int layout = draw.enumeration({CblasRowMajor, CblasColMajor});
    const int e_side = draw.enumeration({CblasLeft, CblasRight});
    const int e_uplo = draw.enumeration({CblasUpper, CblasLower});
    const bool row = layout == CblasRowMajor;
    const auto [sd, ul, rows, cols] = column_major(row, e_side, e_uplo, m, n);
    const blasint corder = rules::side_order(sd, rows, cols);
    const blasint clda = draw.ld(corder), cldb = draw.ld(rows), cldc = draw.ld(rows);
    goes = c_published && straight::product_at_most(most, rows, cols, corder) && beta != T(0) &&
           (row || layout == CblasColMajor) &&
           rules::symm_goes(sd, ul, rows, cols, alpha, a, clda, b, cldb, c, cldc);
    g_got = {};
    using W = std::uint64_t;
    using P = Pass<T>;
    widened<void (*)(W, W, W, W, W, typename P::type, CblasIn<T>, W, CblasIn<T>, W,
                     typename P::type, CblasOut<T>, W)>(cblas)(
        draw.wide(layout), draw.wide(e_side), draw.wide(e_uplo), draw.wide(m), draw.wide(n),
        P::arg(draw, alpha), a, draw.wide(clda), b, draw.wide(cldb), P::arg(draw, beta), c,
        draw.wide(cldc));
    expect(goes, routine + kCblas,
           {bits(layout), bits(e_side), bits(e_uplo), bits(m), bits(n), bits(P::recorded(alpha)),
            bits(a), bits(clda), bits(b), bits(cldb), bits(P::recorded(beta)), bits(c), bits(cldc),
            0, 0},
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
    publish(draw.threshold(m, n, draw.one_in(2) ? m : n, straight::kWorkPerMultiplyAdd<T>),
            draw.rng, 40);
    const std::uint64_t most = most_product<T>();
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
               std::to_string(lda) + " ldb " + std::to_string(ldb) + " alpha " + text(alpha),
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
    using P = Pass<T>;
    widened<void (*)(W, W, W, W, W, W, W, typename P::type, CblasIn<T>, W, CblasOut<T>, W)>(
        solve ? e.cblas_trsm : e.cblas_trmm)(
        draw.wide(layout), draw.wide(e_side), draw.wide(e_uplo), draw.wide(e_trans),
        draw.wide(e_diag), draw.wide(m), draw.wide(n), P::arg(draw, alpha), a, draw.wide(clda), b,
        draw.wide(cldb));
    expect(goes, routine + kCblas,
           {bits(layout), bits(e_side), bits(e_uplo), bits(e_trans), bits(e_diag), bits(m), bits(n),
            bits(P::recorded(alpha)), bits(a), bits(clda), bits(b), bits(cldb), 0, 0, 0},
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
  check_rank<float, false, false>(1);
  check_rank<double, false, false>(2);
  check_rank<Complex, false, false>(11);
  check_rank<DoubleComplex, false, false>(12);
}
TEST(StraightLevel3, Syr2kFollowsTheRule) {
  check_rank<float, true, false>(3);
  check_rank<double, true, false>(4);
  check_rank<Complex, true, false>(13);
  check_rank<DoubleComplex, true, false>(14);
}
TEST(StraightLevel3, SymmFollowsTheRule) {
  check_multiply<float, false>(5);
  check_multiply<double, false>(6);
  check_multiply<Complex, false>(15);
  check_multiply<DoubleComplex, false>(16);
}
TEST(StraightLevel3, TrmmFollowsTheRule) {
  check_triangle<float>(false, 7);
  check_triangle<double>(false, 8);
  check_triangle<Complex>(false, 17);
  check_triangle<DoubleComplex>(false, 18);
}
TEST(StraightLevel3, TrsmFollowsTheRule) {
  check_triangle<float>(true, 9);
  check_triangle<double>(true, 10);
  check_triangle<Complex>(true, 19);
  check_triangle<DoubleComplex>(true, 20);
}
TEST(StraightLevel3, HemmFollowsTheRule) {
  check_multiply<Complex, true>(21);
  check_multiply<DoubleComplex, true>(22);
}
TEST(StraightLevel3, HerkFollowsTheRule) {
  check_rank<Complex, false, true>(23);
  check_rank<DoubleComplex, false, true>(24);
}
TEST(StraightLevel3, Her2kFollowsTheRule) {
  check_rank<Complex, true, true>(25);
  check_rank<DoubleComplex, true, true>(26);
}

}  // namespace
