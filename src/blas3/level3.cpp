// The level-3 routines as recursive halvings (level3.hpp). Each step splits the triangular or
// symmetric operand in two along its diagonal: the two diagonal halves recurse, and the block
// between them is one GEMM, the largest product of the step. The recursion stops where the
// caller's routing rule keeps that product on the CPU; the CPU BLAS then does the whole block in
// one call, and where its halves would be smaller than the caller's min_diagonal. So a call whose
// top product stays on the CPU is exactly one CPU BLAS call, and a large one sends half-size,
// quarter-size, ... products to tandem's GEMM. The Hermitian routines are the symmetric ones'
// halvings with the conjugate transpose where those transpose (Symmetric and Hermitian below).
//
// Column-major throughout: element (i, j) of a matrix with leading dimension ld is at i + j * ld.
#include "blas3/level3.hpp"

#include <complex>
#include <string>
#include <type_traits>

#include "base/precision.hpp"
#include "blas3/level3_rules.hpp"
#include "cpu/blas.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail::level3 {

using namespace level3_rules;

namespace {

template <class T>
std::string routine(const char* name) {
  return routine_name(precision_of<T>(), name).str();
}

// Argument checks in the reference's order, positions as in the Fortran call.
class Checks {
 public:
  explicit Checks(std::string routine) : routine_(std::move(routine)) {}

  // A character argument: one of `allowed` (either case).
  template <std::size_t N>
  char option(int position, const char* name, char c, const char (&allowed)[N]) const {
    if (!allows(allowed, c)) {
      std::string list;
      for (const char* p = allowed; *p != '\0'; ++p)
        list += std::string(list.empty() ? "" : p[1] == '\0' ? " or " : ", ") + *p;
      fail(position, name, std::string("= '") + c + "' is not " + list);
    }
    return upper(c);
  }
  void size(int position, const char* name, int64_t v) const {
    if (v < 0) fail(position, name, "= " + std::to_string(v) + " is negative");
  }
  void ld(int position, const char* name, int64_t ld, int64_t rows, const char* rule) const {
    const int64_t need = least(rows);
    if (ld < need)
      fail(position, name,
           "= " + std::to_string(ld) + " is too small: must be at least " + rule + " = " +
               std::to_string(need));
  }
  // A pointer the call must read or write (the reference has no such check; tandem names it).
  void data(int position, const char* name, const void* p) const {
    if (p == nullptr) fail(position, name, "is NULL");
  }

 private:
  [[noreturn]] void fail(int position, const char* name, const std::string& why) const {
    throw Error(Error::Kind::InvalidArgument,
                routine_ + ": argument " + std::to_string(position) + " (" + name + ") " + why,
                position);
  }
  std::string routine_;
};

// A CPU BLAS call for a whole m x n x k block. Below the drop-in's threshold it runs as the
// program's own call would, with OpenBLAS's thread count as it is and no lock (as the drop-in's
// straight GEMM path); a larger one shares the thread-count lock, so it waits for a concurrent
// tandem call that has lent OpenBLAS another count and runs with the program's.
template <class T, class F>
void on_cpu(Products<T>& pr, int64_t m, int64_t n, int64_t k, F&& f) {
  if (pr.below_threshold(m, n, k)) {
    f();
    return;
  }
  cpu_blas::Threads keep(cpu_blas::current_threads());
  f();
}

// What sets the Hermitian routines (hemm, herk, her2k) apart from the symmetric ones (symm, syrk,
// syr2k), whose halvings they share: the transpose that mirrors a stored triangle into the other
// ('T', or 'C': the conjugate transpose), the scalar of a rank-2k update's second product (alpha,
// or its conjugate), C = beta C where there is no product (herk's and her2k's diagonal stays
// real), and the CPU BLAS routines for whole blocks. herk's and her2k's real scalars travel as T.
template <bool Hermitian>
struct Symmetry {
  static constexpr char kMirror = Hermitian ? 'C' : 'T';
  static constexpr const char* kMultiply = Hermitian ? "hemm" : "symm";
  static constexpr const char* kRank = Hermitian ? "herk" : "syrk";
  static constexpr const char* kRank2 = Hermitian ? "her2k" : "syr2k";
  template <class T>
  static T second(T alpha) {
    if constexpr (Hermitian)
      return std::conj(alpha);
    else
      return alpha;
  }
  template <class T>
  static void scale(char uplo, int64_t n, T beta, T* c, int64_t ldc) {
    if constexpr (Hermitian)
      level3_rules::scale_hermitian(uplo, n, beta.real(), c, ldc);
    else
      level3_rules::scale(uplo, n, n, beta, c, ldc);
  }
  template <class T>
  static void rank(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                   T beta, T* c, int64_t ldc) {
    if constexpr (Hermitian)
      cpu_blas::herk(uplo, trans, n, k, alpha.real(), a, lda, beta.real(), c, ldc);
    else
      cpu_blas::syrk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
  }
  template <class T>
  static void rank2(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                    const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
    if constexpr (Hermitian)
      cpu_blas::her2k(uplo, trans, n, k, alpha, a, lda, b, ldb, beta.real(), c, ldc);
    else
      cpu_blas::syr2k(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  template <class T>
  static void multiply(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda,
                       const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
    if constexpr (Hermitian)
      cpu_blas::hemm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
    else
      cpu_blas::symm(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
  }
};
using Symmetric = Symmetry<false>;
using Hermitian = Symmetry<true>;

// The ops of a rank-k update's off-diagonal product op(A)_i op(A)_j^T (^H for Hermitian S): the
// left operand's and the right one's, for trans 'N' (A n x k) or not (A k x n).
template <class S>
struct RankOps {
  explicit RankOps(char trans) : tr(trans != 'N') {}
  bool tr;
  char left() const { return tr ? S::kMirror : 'N'; }
  char right() const { return tr ? 'N' : S::kMirror; }
};

// C (n x n, triangle `uplo`) = alpha op(A) op(A)^T + beta C (^H for Hermitian S), op(A) n x k: C11
// and C22 recurse, and the block between them is one GEMM.
template <class S, class T>
void syrk_step(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               T beta, T* c, int64_t ldc, Products<T>& pr) {
  const int64_t n1 = n / 2, n2 = n - n1;
  const bool lower = uplo == 'L';
  const RankOps<S> ops(trans);
  auto rows = [&](int64_t i) { return ops.tr ? a + i * lda : a + i; };  // op(A)'s rows from i
  // The off-diagonal block: C21 (n2 x n1) or C12 (n1 x n2) = alpha op(A)_i op(A)_j^T + beta C.
  const int64_t bm = lower ? n2 : n1, bn = lower ? n1 : n2;
  const T *left = rows(lower ? n1 : 0), *right = rows(lower ? 0 : n1);
  T* off = lower ? c + n1 : c + n1 * ldc;
  if (n1 == 0 || n1 < pr.min_diagonal() ||
      !pr.offloads(ops.left(), ops.right(), bm, bn, k, left, lda, right, lda, beta, off, ldc)) {
    on_cpu(pr, n, n, k, [&] { S::rank(uplo, trans, n, k, alpha, a, lda, beta, c, ldc); });
    return;
  }
  pr.gemm(ops.left(), ops.right(), bm, bn, k, alpha, left, lda, right, lda, beta, off, ldc);
  syrk_step<S>(uplo, trans, n1, k, alpha, rows(0), lda, beta, c, ldc, pr);
  syrk_step<S>(uplo, trans, n2, k, alpha, rows(n1), lda, beta, c + n1 + n1 * ldc, ldc, pr);
}

// As syrk_step, for alpha op(A) op(B)^T + alpha op(B) op(A)^T (for Hermitian S, alpha op(A) op(B)^H
// + conj(alpha) op(B) op(A)^H): two GEMMs per block.
template <class S, class T>
void syr2k_step(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  const int64_t n1 = n / 2, n2 = n - n1;
  const bool lower = uplo == 'L';
  const RankOps<S> ops(trans);
  auto rows_a = [&](int64_t i) { return ops.tr ? a + i * lda : a + i; };
  auto rows_b = [&](int64_t i) { return ops.tr ? b + i * ldb : b + i; };
  const int64_t bm = lower ? n2 : n1, bn = lower ? n1 : n2;
  const int64_t i = lower ? n1 : 0, j = lower ? 0 : n1;
  T* off = lower ? c + n1 : c + n1 * ldc;
  if (n1 == 0 || n1 < pr.min_diagonal() ||
      !pr.offloads(ops.left(), ops.right(), bm, bn, k, rows_a(i), lda, rows_b(j), ldb, beta, off,
                   ldc)) {
    on_cpu(pr, n, n, k, [&] { S::rank2(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
    return;
  }
  pr.gemm(ops.left(), ops.right(), bm, bn, k, alpha, rows_a(i), lda, rows_b(j), ldb, beta, off,
          ldc);
  pr.gemm(ops.left(), ops.right(), bm, bn, k, S::second(alpha), rows_b(i), ldb, rows_a(j), lda,
          T(1), off, ldc);
  syr2k_step<S>(uplo, trans, n1, k, alpha, rows_a(0), lda, rows_b(0), ldb, beta, c, ldc, pr);
  syr2k_step<S>(uplo, trans, n2, k, alpha, rows_a(n1), lda, rows_b(n1), ldb, beta,
                c + n1 + n1 * ldc, ldc, pr);
}

// An off-diagonal block of a symmetric, Hermitian or triangular A split at d1, as a GEMM operand:
// where it is stored (below the diagonal for 'L', above for 'U') and its op ('N', 'T' or 'C').
template <class T>
struct Block {
  const T* p;
  char op;
};
template <class T>
Block<T> stored_block(char uplo, const T* a, int64_t lda, int64_t d1, char op) {
  return {uplo == 'L' ? a + d1 : a + d1 * lda, op};
}

// C = alpha A B + beta C (side 'L', A m x m) or alpha B A + beta C (side 'R', A n x n), A
// symmetric (Hermitian for Hermitian S) with its `uplo` triangle stored.
template <class S, class T>
void symm_step(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  const bool left = side == 'L';
  const int64_t d = left ? m : n, d1 = d / 2, d2 = d - d1;
  const T* a22 = a + d1 + d1 * lda;
  // A21 (d2 x d1) and A12 (d1 x d2), one of them stored, the other its mirror.
  const Block<T> a21 = stored_block(uplo, a, lda, d1, uplo == 'U' ? S::kMirror : 'N');
  const Block<T> a12 = stored_block(uplo, a, lda, d1, uplo == 'L' ? S::kMirror : 'N');
  auto whole = [&] {
    on_cpu(pr, m, n, d,
           [&] { S::multiply(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc); });
  };
  if (left) {
    // C1 = A11 B1 + A12 B2, C2 = A21 B1 + A22 B2 (row blocks).
    const T *b1 = b, *b2 = b + d1;
    T *c1 = c, *c2 = c + d1;
    if (d1 == 0 || d1 < pr.min_diagonal() ||
        !pr.offloads(a21.op, 'N', d2, n, d1, a21.p, lda, b1, ldb, beta, c2, ldc))
      return whole();
    symm_step<S>(side, uplo, d1, n, alpha, a, lda, b1, ldb, beta, c1, ldc, pr);
    pr.gemm(a12.op, 'N', d1, n, d2, alpha, a12.p, lda, b2, ldb, T(1), c1, ldc);
    pr.gemm(a21.op, 'N', d2, n, d1, alpha, a21.p, lda, b1, ldb, beta, c2, ldc);
    symm_step<S>(side, uplo, d2, n, alpha, a22, lda, b2, ldb, T(1), c2, ldc, pr);
  } else {
    // C1 = B1 A11 + B2 A21, C2 = B1 A12 + B2 A22 (column blocks).
    const T *b1 = b, *b2 = b + d1 * ldb;
    T *c1 = c, *c2 = c + d1 * ldc;
    if (d1 == 0 || d1 < pr.min_diagonal() ||
        !pr.offloads('N', a12.op, m, d2, d1, b1, ldb, a12.p, lda, beta, c2, ldc))
      return whole();
    symm_step<S>(side, uplo, m, d1, alpha, a, lda, b1, ldb, beta, c1, ldc, pr);
    pr.gemm('N', a21.op, m, d1, d2, alpha, b2, ldb, a21.p, lda, T(1), c1, ldc);
    pr.gemm('N', a12.op, m, d2, d1, alpha, b1, ldb, a12.p, lda, beta, c2, ldc);
    symm_step<S>(side, uplo, m, d2, alpha, a22, lda, b2, ldb, T(1), c2, ldc, pr);
  }
}

// The shape shared by trmm and trsm: op(A) is lower triangular when A's stored triangle and the
// transpose say so together; its off-diagonal block is A's stored one, with A's op ('N', 'T' or
// 'C').
struct Triangle {
  char side, uplo, trans, diag;
  bool left() const { return side == 'L'; }
  bool tr() const { return trans != 'N'; }
  bool op_lower() const { return (uplo == 'L') != tr(); }
};

// One halving of B for trmm and trsm, at d1 of A's d rows: B's halves (rows for side 'L', columns
// for 'R'), each one's diagonal block of A, and the GEMM that carries one half into the other
// through op(A)'s off-diagonal block. The half that receives (`into`) is the second where op(A)'s
// block lies below the diagonal on the left or above it on the right: B2 gets L21 B1, B1 gets
// U12 B2, B1 gets B2 L21, B2 gets B1 U12.
template <class T>
struct Halves {
  Halves(const Triangle& t_, int64_t m_, int64_t n_, const T* a_, int64_t lda_, T* b_, int64_t ldb_)
      : t(t_), m(m_), n(n_), a(a_), lda(lda_), b(b_), ldb(ldb_) {
    const int64_t d = t.left() ? m : n;
    d1 = d / 2;
    d2 = d - d1;
    off = stored_block(t.uplo, a, lda, d1, t.trans);
    into_second = t.left() == t.op_lower();
  }
  T* half(bool second) const { return !second ? b : t.left() ? b + d1 : b + d1 * ldb; }
  const T* diagonal(bool second) const { return second ? a + d1 + d1 * lda : a; }
  int64_t rows(bool second) const { return t.left() ? (second ? d2 : d1) : m; }
  int64_t cols(bool second) const { return t.left() ? n : (second ? d2 : d1); }
  int64_t size(bool second) const { return second ? d2 : d1; }

  // into = alpha op(off) from + beta into (left) or alpha from op(off) + beta into (right); or,
  // with `ask`, whether the products would take that GEMM off the CPU.
  bool carry(Products<T>& pr, bool ask, T alpha, T beta) const {
    T* to = half(into_second);
    const T* from = half(!into_second);
    const int64_t rm = rows(into_second), rn = cols(into_second), k = size(!into_second);
    if (t.left()) {
      if (ask) return pr.offloads(off.op, 'N', rm, rn, k, off.p, lda, from, ldb, beta, to, ldb);
      pr.gemm(off.op, 'N', rm, rn, k, alpha, off.p, lda, from, ldb, beta, to, ldb);
    } else {
      if (ask) return pr.offloads('N', off.op, rm, rn, k, from, ldb, off.p, lda, beta, to, ldb);
      pr.gemm('N', off.op, rm, rn, k, alpha, from, ldb, off.p, lda, beta, to, ldb);
    }
    return true;
  }

  const Triangle& t;
  int64_t m, n;
  const T* a;
  int64_t lda;
  T* b;
  int64_t ldb;
  int64_t d1 = 0, d2 = 0;
  Block<T> off{};
  bool into_second = false;
};

// B = alpha op(A) B (side 'L') or alpha B op(A) (side 'R'), in place. The receiving half is first
// multiplied by its own diagonal block, then receives the product of the other half's old values,
// which is multiplied by its diagonal block last.
template <class T>
void trmm_step(const Triangle& t, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, T* b,
               int64_t ldb, Products<T>& pr) {
  const Halves<T> h(t, m, n, a, lda, b, ldb);
  if (h.d1 == 0 || h.d1 < pr.min_diagonal() || !h.carry(pr, true, alpha, T(1))) {
    on_cpu(pr, m, n, t.left() ? m : n,
           [&] { cpu_blas::trmm(t.side, t.uplo, t.trans, t.diag, m, n, alpha, a, lda, b, ldb); });
    return;
  }
  auto diagonal = [&](bool second) {
    trmm_step(t, h.rows(second), h.cols(second), alpha, h.diagonal(second), lda, h.half(second),
              ldb, pr);
  };
  diagonal(h.into_second);
  h.carry(pr, false, alpha, T(1));
  diagonal(!h.into_second);
}

// Solves op(A) X = alpha B (side 'L') or X op(A) = alpha B (side 'R') for X, in place: the half
// that depends on no other (the one that gives) is solved first, the receiving half becomes
// alpha B - (the product of that solution), and is solved last.
template <class T>
void trsm_step(const Triangle& t, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, T* b,
               int64_t ldb, Products<T>& pr) {
  const Halves<T> h(t, m, n, a, lda, b, ldb);
  if (h.d1 == 0 || h.d1 < pr.min_diagonal() || !h.carry(pr, true, T(-1), alpha)) {
    on_cpu(pr, m, n, t.left() ? m : n,
           [&] { cpu_blas::trsm(t.side, t.uplo, t.trans, t.diag, m, n, alpha, a, lda, b, ldb); });
    return;
  }
  auto solve = [&](bool second, T coefficient) {
    trsm_step(t, h.rows(second), h.cols(second), coefficient, h.diagonal(second), lda,
              h.half(second), ldb, pr);
  };
  solve(!h.into_second, alpha);
  h.carry(pr, false, T(-1), alpha);
  solve(h.into_second, T(1));
}

}  // namespace

namespace {

// The transposes a rank-k update allows, checked; a real type's 'C' becomes 'T'.
template <class S, class T>
char rank_trans(const Checks& check, char trans) {
  if constexpr (std::is_same_v<S, Hermitian>)
    return check.option(2, "trans", trans, kTransHermitian);
  else if constexpr (is_complex(precision_of<T>()))
    return check.option(2, "trans", trans, kTransSymmetric);
  else
    return check.option(2, "trans", trans, kTrans) == 'N' ? 'N' : 'T';
}

// syrk's, syr2k's, herk's and her2k's checks and empty cases (`b`: the rank-2k updates' B, with
// its ldb; null for the rank-k ones, whose later arguments sit two positions earlier); false when
// nothing is left to compute.
template <class S, class T>
bool rank_call(const char* name, char& uplo, char& trans, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, bool two, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  const Checks check(routine<T>(name));
  uplo = check.option(1, "uplo", uplo, kUplo);
  trans = rank_trans<S, T>(check, trans);
  check.size(3, "n", n);
  check.size(4, "k", k);
  const bool tr = trans != 'N';
  check.ld(7, "lda", lda, rank_rows(trans, n, k), tr ? "max(1, k)" : "max(1, n)");
  if (two) check.ld(9, "ldb", ldb, rank_rows(trans, n, k), tr ? "max(1, k)" : "max(1, n)");
  const int c_at = two ? 11 : 9;  // C's position; ldc follows it
  check.ld(c_at + 1, "ldc", ldc, n, "max(1, n)");
  if (n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return false;
  check.data(c_at, "c", c);
  if (alpha == T(0) || k == 0) {
    S::scale(uplo, n, beta, c, ldc);
    return false;
  }
  check.data(6, "a", a);
  if (two) check.data(8, "b", b);
  if (beta == T(0)) S::scale(uplo, n, beta, c, ldc);
  return true;
}

template <class S, class T>
void rank(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta,
          T* c, int64_t ldc, Products<T>& pr) {
  if (rank_call<S, T>(S::kRank, uplo, trans, n, k, alpha, a, lda, false, nullptr, 0, beta, c, ldc))
    syrk_step<S>(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, pr);
}

template <class S, class T>
void rank2(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  if (rank_call<S, T>(S::kRank2, uplo, trans, n, k, alpha, a, lda, true, b, ldb, beta, c, ldc))
    syr2k_step<S>(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr);
}

template <class S, class T>
void multiply(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  const Checks check(routine<T>(S::kMultiply));
  side = check.option(1, "side", side, kSide);
  uplo = check.option(2, "uplo", uplo, kUplo);
  check.size(3, "m", m);
  check.size(4, "n", n);
  const bool left = side == 'L';
  check.ld(7, "lda", lda, side_order(side, m, n), left ? "max(1, m)" : "max(1, n)");
  check.ld(9, "ldb", ldb, m, "max(1, m)");
  check.ld(12, "ldc", ldc, m, "max(1, m)");
  if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) return;
  check.data(11, "c", c);
  if (alpha == T(0)) return scale('\0', m, n, beta, c, ldc);
  check.data(6, "a", a);
  check.data(8, "b", b);
  if (beta == T(0)) scale('\0', m, n, beta, c, ldc);
  symm_step<S>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, pr);
}

}  // namespace

template <class T>
void syrk(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, T beta,
          T* c, int64_t ldc, Products<T>& pr) {
  rank<Symmetric>(uplo, trans, n, k, alpha, a, lda, beta, c, ldc, pr);
}

template <class T>
void herk(char uplo, char trans, int64_t n, int64_t k, typename T::value_type alpha, const T* a,
          int64_t lda, typename T::value_type beta, T* c, int64_t ldc, Products<T>& pr) {
  rank<Hermitian>(uplo, trans, n, k, T(alpha), a, lda, T(beta), c, ldc, pr);
}

template <class T>
void syr2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  rank2<Symmetric>(uplo, trans, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pr);
}

template <class T>
void her2k(char uplo, char trans, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
           const T* b, int64_t ldb, typename T::value_type beta, T* c, int64_t ldc,
           Products<T>& pr) {
  rank2<Hermitian>(uplo, trans, n, k, alpha, a, lda, b, ldb, T(beta), c, ldc, pr);
}

template <class T>
void symm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  multiply<Symmetric>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, pr);
}

template <class T>
void hemm(char side, char uplo, int64_t m, int64_t n, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc, Products<T>& pr) {
  multiply<Hermitian>(side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc, pr);
}

namespace {

// trmm's and trsm's checks and empty cases; false when nothing is left to compute. A real type's
// 'C' becomes 'T'.
template <class T>
bool triangle_call(const char* name, Triangle& t, int64_t m, int64_t n, T alpha, const T* a,
                   int64_t lda, T* b, int64_t ldb) {
  const Checks check(routine<T>(name));
  t.side = check.option(1, "side", t.side, kSide);
  t.uplo = check.option(2, "uplo", t.uplo, kUplo);
  t.trans = check.option(3, "transa", t.trans, kTrans);
  if (t.trans == 'C' && !is_complex(precision_of<T>())) t.trans = 'T';
  t.diag = check.option(4, "diag", t.diag, kDiag);
  check.size(5, "m", m);
  check.size(6, "n", n);
  check.ld(9, "lda", lda, side_order(t.side, m, n), t.left() ? "max(1, m)" : "max(1, n)");
  check.ld(11, "ldb", ldb, m, "max(1, m)");
  if (m == 0 || n == 0) return false;
  check.data(10, "b", b);
  if (alpha == T(0)) {
    scale('\0', m, n, T(0), b, ldb);
    return false;
  }
  check.data(8, "a", a);
  return true;
}

}  // namespace

template <class T>
void trmm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb, Products<T>& pr) {
  Triangle t{side, uplo, trans, diag};
  if (triangle_call("trmm", t, m, n, alpha, a, lda, b, ldb))
    trmm_step(t, m, n, alpha, a, lda, b, ldb, pr);
}

template <class T>
void trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, T alpha, const T* a,
          int64_t lda, T* b, int64_t ldb, Products<T>& pr) {
  Triangle t{side, uplo, trans, diag};
  if (triangle_call("trsm", t, m, n, alpha, a, lda, b, ldb))
    trsm_step(t, m, n, alpha, a, lda, b, ldb, pr);
}

#define TANDEM_LEVEL3(T)                                                                           \
  template void syrk<T>(char, char, int64_t, int64_t, T, const T*, int64_t, T, T*, int64_t,        \
                        Products<T>&);                                                             \
  template void syr2k<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                         T*, int64_t, Products<T>&);                                               \
  template void symm<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T,  \
                        T*, int64_t, Products<T>&);                                                \
  template void trmm<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*,        \
                        int64_t, Products<T>&);                                                    \
  template void trsm<T>(char, char, char, char, int64_t, int64_t, T, const T*, int64_t, T*,        \
                        int64_t, Products<T>&);
TANDEM_FOR_EACH_ELEMENT(TANDEM_LEVEL3)
#undef TANDEM_LEVEL3
#define TANDEM_HERMITIAN(T)                                                                       \
  template void hemm<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, \
                        T*, int64_t, Products<T>&);                                               \
  template void herk<T>(char, char, int64_t, int64_t, T::value_type, const T*, int64_t,           \
                        T::value_type, T*, int64_t, Products<T>&);                                \
  template void her2k<T>(char, char, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t,   \
                         T::value_type, T*, int64_t, Products<T>&);
TANDEM_HERMITIAN(std::complex<float>)
TANDEM_HERMITIAN(std::complex<double>)
#undef TANDEM_HERMITIAN

}  // namespace tandem::detail::level3
