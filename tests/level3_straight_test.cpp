// The drop-in's straight path for syrk, syr2k, symm, trmm and trsm, and the complex hemm, herk and
// her2k (src/blas3/dropin/level3_entries.cpp and, on x86-64,
// src/blas3/dropin/straight_x86_64.S): a valid call below the threshold goes from the exported
// entry to OpenBLAS's own, C zeroed first where beta is 0. It must change nothing but the time.
// This program draws thousands of small calls through every entry, Fortran and CBLAS, in all four
// precisions, valid and not: odd option characters in either
// case, invalid enumerations and layouts, negative and zero sizes, leading dimensions one short of
// each size and not positive, NULL operands, alpha 0 (A and B full of NaN), -0 and NaN, beta 0 and
// -0 over a C full of NaN, and NaN (complex scalars with and without imaginary parts). It runs the
// same draws in two child processes of itself: one as a program runs (calls go straight), one under
// TANDEM_VERBOSE, which keeps every call off the straight path (tandem's ordinary path: its own
// checks, its own BLAS rules, then one CPU BLAS call). Both must leave every output array the same
// to the bit and report the same invalid arguments at the same positions. Which path a call took is
// not visible here: tests/straight_level3_test.cpp holds the assembly's routing to the rule, and
// bench/small_calls shows the time.
#include <cblas.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "base/precision.hpp"
#include "blas3/dropin/blas_entries.hpp"
#include "xerbla_recorder.hpp"

extern "C" char** environ;

namespace {

constexpr int kDraws = 12000;
constexpr size_t kElements = 160;  // every operand's storage: ld at most 12, 12 columns
const char* const kOut = "TANDEM_TEST_LEVEL3_DRAWS";

// One call's arguments, drawn.
struct Draw {
  int routine = 0;  // syrk, syr2k, symm, trmm, trsm, then hemm, herk, her2k (complex only)
  bool cblas = false;
  tandem::detail::Precision precision = tandem::detail::Precision::s;
  int layout = CblasColMajor;
  char side = 'L', uplo = 'U', trans = 'N', diag = 'N';  // Fortran characters
  int e_side = CblasLeft, e_uplo = CblasUpper, e_trans = CblasNoTrans, e_diag = CblasNonUnit;
  int m = 0, n = 0, k = 0, lda = 1, ldb = 1, ldc = 1;
  double alpha = 1, beta = 1, alpha_im = 0, beta_im = 0;  // the imaginary parts: complex only
  bool null_a = false, null_b = false, null_c = false, nan_c = false;
  std::string describe() const {
    static const char* const names[] = {"syrk", "syr2k", "symm", "trmm",
                                        "trsm", "hemm",  "herk", "her2k"};
    std::ostringstream s;
    s << (cblas ? "cblas_" : "") << tandem::detail::routine_name(precision, names[routine]).c_str()
      << " layout " << layout << " side '" << side << "'/" << e_side << " uplo '" << uplo << "'/"
      << e_uplo << " trans '" << trans << "'/" << e_trans << " diag '" << diag << "'/" << e_diag
      << " m " << m << " n " << n << " k " << k << " lda " << lda << " ldb " << ldb << " ldc "
      << ldc << " alpha " << alpha << "," << alpha_im << " beta " << beta << "," << beta_im
      << (null_a ? " A=NULL" : "") << (null_b ? " B=NULL" : "") << (null_c ? " C=NULL" : "")
      << (nan_c ? " C=NaN" : "");
    return s.str();
  }
};

// Mostly valid, with each argument sometimes one a BLAS must refuse or treat specially.
Draw draw(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto one_in = [&](int n) { return pick(n) == 0; };
  auto letter = [&](const char* valid) {
    if (one_in(30)) return "XZ?\0"[pick(4)];
    const char c = valid[pick(static_cast<int>(std::strlen(valid)))];
    return one_in(3) ? static_cast<char>(c - 'A' + 'a') : c;
  };
  auto enumeration = [&](std::initializer_list<int> valid) {
    if (one_in(30)) return one_in(2) ? 0 : 200;
    return *(valid.begin() + pick(static_cast<int>(valid.size())));
  };
  Draw d;
  d.precision = tandem::detail::kPrecisions[pick(4)];
  d.routine = pick(tandem::detail::is_complex(d.precision) ? 8 : 5);
  d.cblas = one_in(2);
  d.layout = one_in(40) ? 7 : one_in(2) ? CblasRowMajor : CblasColMajor;
  d.side = letter("LR");
  d.uplo = letter("UL");
  d.trans = letter("NTC");
  d.diag = letter("UN");
  d.e_side = enumeration({CblasLeft, CblasRight});
  d.e_uplo = enumeration({CblasUpper, CblasLower});
  d.e_trans = enumeration({CblasNoTrans, CblasTrans, CblasConjTrans});
  d.e_diag = enumeration({CblasUnit, CblasNonUnit});
  const int sizes[] = {-1, 0, 1, 2, 3, 4, 5, 7, 8, 8};
  d.m = sizes[pick(10)];
  d.n = sizes[pick(10)];
  d.k = sizes[pick(10)];
  // Leading dimensions on any rule's edge: one short of a size, the size, padded, or not
  // positive.
  auto ld = [&] {
    if (one_in(25)) return one_in(2) ? -1 : 0;
    const int size = std::max(1, one_in(3) ? d.m : one_in(2) ? d.n : d.k);
    if (one_in(10)) return size - 1;
    if (one_in(9)) return size;
    return std::max({1, d.m, d.n, d.k}) + (one_in(4) ? 2 : 0);
  };
  d.lda = ld();
  d.ldb = ld();
  d.ldc = ld();
  const double alphas[] = {1, -0.5, 2, 0, -0.0, std::numeric_limits<double>::quiet_NaN()};
  d.alpha = alphas[one_in(3) ? 3 + pick(3) : pick(3)];
  const double betas[] = {1, 0.5, -1, 0, 0, -0.0, std::numeric_limits<double>::quiet_NaN()};
  d.beta = betas[pick(7)];
  // Complex scalars: an imaginary part beside most real ones, alone where the real one is 0.
  const double parts[] = {0, 0, 0.25, -1.5};
  d.alpha_im = d.alpha == 0 && one_in(2) ? 0 : parts[pick(4)];
  d.beta_im = d.beta == 0 && one_in(2) ? 0 : parts[pick(4)];
  d.null_a = one_in(25);
  d.null_b = one_in(25);
  d.null_c = one_in(25);
  d.nan_c = d.beta == 0 && (d.beta_im == 0 || one_in(2)) && !one_in(4);  // -0.0 too
  return d;
}

// 64-bit FNV-1a over bytes.
uint64_t hash(const void* p, size_t bytes, uint64_t h = 1469598103934665603ull) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// A value of T from its parts (the imaginary one dropped for a real type), and NaN in every part.
template <class T>
T value(double re, double im) {
  if constexpr (tandem::detail::is_complex(tandem::detail::precision_of<T>()))
    return T(static_cast<typename T::value_type>(re), static_cast<typename T::value_type>(im));
  else
    return static_cast<T>(re);
}
template <class T>
T nan() {
  const double q = std::numeric_limits<double>::quiet_NaN();
  return value<T>(q, q);
}

// A scalar as cblas.h passes it: a real one by value, a complex one by address.
template <class T>
auto cblas_scalar(const T& x) {
  if constexpr (tandem::detail::is_complex(tandem::detail::precision_of<T>()))
    return static_cast<const void*>(&x);
  else
    return x;
}

// A draw's arguments as the entries take them: CBLAS's enumerations, Fortran's characters.
struct Args {
  explicit Args(const Draw& d)
      : m(d.m),
        n(d.n),
        k(d.k),
        lda(d.lda),
        ldb(d.ldb),
        ldc(d.ldc),
        order(static_cast<CBLAS_ORDER>(d.layout)),
        side(static_cast<CBLAS_SIDE>(d.e_side)),
        uplo(static_cast<CBLAS_UPLO>(d.e_uplo)),
        trans(static_cast<CBLAS_TRANSPOSE>(d.e_trans)),
        diag(static_cast<CBLAS_DIAG>(d.e_diag)),
        fs(&d.side),
        fu(&d.uplo),
        ft(&d.trans),
        fd(&d.diag) {}
  blasint m, n, k, lda, ldb, ldc;
  CBLAS_ORDER order;
  CBLAS_SIDE side;
  CBLAS_UPLO uplo;
  CBLAS_TRANSPOSE trans;
  CBLAS_DIAG diag;
  const char *fs, *fu, *ft, *fd;
};

// hemm, herk and her2k (routines 5, 6, 7) of a complex T; a real T has none.
template <class T>
void hermitian(const Draw& d, const Args& g, const T* pa, const T* pb, T* pc, const T& alpha,
               const T& beta) {
  if constexpr (tandem::detail::is_complex(tandem::detail::precision_of<T>())) {
    using R = typename T::value_type;
    const R ralpha = alpha.real(), rbeta = beta.real();  // herk's and her2k's real scalars
    const auto e = tandem::detail::blas_entries::resolved_hermitian<T>();
    if (d.routine == 5 && d.cblas)
      e.cblas_hemm(g.order, g.side, g.uplo, g.m, g.n, &alpha, pa, g.lda, pb, g.ldb, &beta, pc,
                   g.ldc);
    else if (d.routine == 5)
      e.hemm(g.fs, g.fu, &g.m, &g.n, &alpha, pa, &g.lda, pb, &g.ldb, &beta, pc, &g.ldc);
    else if (d.routine == 6 && d.cblas)
      e.cblas_herk(g.order, g.uplo, g.trans, g.n, g.k, ralpha, pa, g.lda, rbeta, pc, g.ldc);
    else if (d.routine == 6)
      e.herk(g.fu, g.ft, &g.n, &g.k, &ralpha, pa, &g.lda, &rbeta, pc, &g.ldc);
    else if (d.cblas)
      e.cblas_her2k(g.order, g.uplo, g.trans, g.n, g.k, &alpha, pa, g.lda, pb, g.ldb, rbeta, pc,
                    g.ldc);
    else
      e.her2k(g.fu, g.ft, &g.n, &g.k, &alpha, pa, &g.lda, pb, &g.ldb, &rbeta, pc, &g.ldc);
  } else {
    (void)g, (void)pa, (void)pb, (void)pc, (void)alpha, (void)beta;
    ADD_FAILURE() << "no real " << d.describe();
  }
}

// Runs one draw through the drop-in: returns the output operand (C, or B for trmm and trsm) as
// the call left it, and what was reported.
template <class T>
std::string run(const Draw& d, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a(kElements), b(kElements), c(kElements);
  for (auto* v : {&a, &b, &c})
    for (T& x : *v) {
      const double re = u(rng);
      x = value<T>(re, u(rng));
    }
  // A well-conditioned triangle for trsm: a large diagonal.
  const int ld = std::max(1, d.lda);
  for (int i = 0; i < 12 && i * ld + i < static_cast<int>(kElements); ++i)
    a[static_cast<size_t>(i * ld + i)] = value<T>(3 + u(rng), 0.5);
  if (d.nan_c)
    for (T& x : c) x = nan<T>();
  const bool triangle = d.routine == 3 || d.routine == 4, real_alpha = d.routine == 6;
  // alpha = 0 reads neither A nor B (B is read-write in trmm and trsm, and keeps its values).
  if (d.alpha == 0 && (real_alpha || d.alpha_im == 0))
    for (auto* v : triangle ? std::vector<std::vector<T>*>{&a} : std::vector{&a, &b})
      for (T& x : *v) x = nan<T>();
  const T* pa = d.null_a ? nullptr : a.data();
  const T* pb = d.null_b ? nullptr : b.data();
  T* pc = d.null_c ? nullptr : c.data();
  T* pbw = d.null_b ? nullptr : b.data();  // trmm's and trsm's B, written in place
  const T alpha = value<T>(d.alpha, d.alpha_im), beta = value<T>(d.beta, d.beta_im);
  const auto ca = cblas_scalar(alpha), cb = cblas_scalar(beta);
  const Args g(d);
  const blasint &m = g.m, &n = g.n, &k = g.k, &lda = g.lda, &ldb = g.ldb, &ldc = g.ldc;
  const auto order = g.order;
  const auto side = g.side;
  const auto uplo = g.uplo;
  const auto trans = g.trans;
  const auto diag = g.diag;
  const char *fs = g.fs, *fu = g.fu, *ft = g.ft, *fd = g.fd;
  xerbla_recorder::reset();
  const auto e = tandem::detail::blas_entries::resolved<T>();
  switch (d.routine) {
    case 0:
      if (d.cblas)
        e.cblas_syrk(order, uplo, trans, n, k, ca, pa, lda, cb, pc, ldc);
      else
        e.syrk(fu, ft, &n, &k, &alpha, pa, &lda, &beta, pc, &ldc);
      break;
    case 1:
      if (d.cblas)
        e.cblas_syr2k(order, uplo, trans, n, k, ca, pa, lda, pb, ldb, cb, pc, ldc);
      else
        e.syr2k(fu, ft, &n, &k, &alpha, pa, &lda, pb, &ldb, &beta, pc, &ldc);
      break;
    case 2:
      if (d.cblas)
        e.cblas_symm(order, side, uplo, m, n, ca, pa, lda, pb, ldb, cb, pc, ldc);
      else
        e.symm(fs, fu, &m, &n, &alpha, pa, &lda, pb, &ldb, &beta, pc, &ldc);
      break;
    case 3:
    case 4:
      if (d.cblas)
        (d.routine == 4 ? e.cblas_trsm : e.cblas_trmm)(order, side, uplo, trans, diag, m, n, ca, pa,
                                                       lda, pbw, ldb);
      else
        (d.routine == 4 ? e.trsm : e.trmm)(fs, fu, ft, fd, &m, &n, &alpha, pa, &lda, pbw, &ldb);
      break;
    default:
      hermitian<T>(d, g, pa, pb, pc, alpha, beta);
  }
  const std::vector<T>& out = triangle ? b : c;
  std::ostringstream s;
  s << std::hex << hash(out.data(), out.size() * sizeof(T)) << std::dec << " reported "
    << xerbla_recorder::g_calls << " " << xerbla_recorder::g_routine << ":"
    << xerbla_recorder::g_info;
  return s.str();
}

// The draws, one line each: the call, and what it left.
std::string all_draws() {
  std::mt19937 rng(2026);
  std::ostringstream lines;
  for (int i = 0; i < kDraws; ++i) {
    const Draw d = draw(rng);
    lines << i << " " << d.describe() << " -> "
          << tandem::detail::with_element_type(
                 d.precision, [&](auto zero) { return run<decltype(zero)>(d, rng); })
          << "\n";
  }
  return lines.str();
}

// The worker: writes the draws' lines to the file the environment names (skipped otherwise).
TEST(Level3StraightWorker, Draws) {
  const char* out = std::getenv(kOut);
  if (out == nullptr) GTEST_SKIP() << "run by Level3Straight.ChangesNothingButTheTime";
  std::ofstream(out) << all_draws();
}

// Runs this program's worker with `verbose` or not; returns its lines.
std::vector<std::string> worker(bool verbose) {
  const std::string dir = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp";
  const std::string path = dir + (verbose ? "/draws-verbose.txt" : "/draws-straight.txt");
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "TANDEM_VERBOSE=", 15) != 0 && std::strncmp(*e, kOut, 24) != 0)
      env.emplace_back(*e);
  env.push_back(std::string(kOut) + "=" + path);
  if (verbose) env.push_back("TANDEM_VERBOSE=1");
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", filter = "--gtest_filter=Level3StraightWorker.Draws";
  char* argv[] = {exe.data(), filter.data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The verbose worker logs every call: not wanted here.
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0);
  int status = 0;
  if (spawned == 0) waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker status " << status;
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Level3Straight, ChangesNothingButTheTime) {
  const std::vector<std::string> straight = worker(false), ordinary = worker(true);
  ASSERT_EQ(straight.size(), static_cast<size_t>(kDraws));
  ASSERT_EQ(ordinary.size(), static_cast<size_t>(kDraws));
  int differ = 0, reported = 0;
  for (size_t i = 0; i < straight.size(); ++i) {
    if (straight[i].find(" reported 0 ") == std::string::npos) ++reported;
    if (straight[i] != ordinary[i] && ++differ <= 10)
      ADD_FAILURE() << "straight: " << straight[i] << "\nordinary: " << ordinary[i];
  }
  EXPECT_EQ(differ, 0);
  // The draws reach both sides: calls reported invalid, and the rest.
  EXPECT_GT(reported, kDraws / 20);
  EXPECT_GT(kDraws - reported, kDraws / 4);
}

}  // namespace
