// tandem::gemm<T>: the boundary where BLAS semantics are enforced, and one call top-down. Arguments
// are checked (C is untouched on an error), column-major calls become row-major ones
// (C^T = op(B)^T op(A)^T), and the cases BLAS defines without a product (m or n = 0, k = 0,
// alpha = 0) are done here, so that neither backend ever sees them; then the call is planned
// (plan/) and its plan run (run/), which joins the shares and fills the report.
#include <algorithm>
#include <cstdio>
#include <string>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/gemm_rules.hpp"
#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "cpu/blas.hpp"
#include "plan/plan.hpp"
#include "plan/watch.hpp"
#include "run/executor.hpp"
#include "tandem/tandem.hpp"

namespace tandem {

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::Auto:
      return "auto";
    case Strategy::Cpu:
      return "cpu";
    case Strategy::Gpu:
      return "gpu";
    case Strategy::Hybrid:
      return "hybrid";
  }
  return "?";
}

const char* to_string(Balance b) { return b == Balance::Dynamic ? "dynamic" : "static"; }

const char* to_string(Report::Buffer b) {
  switch (b) {
    case Report::Buffer::None:
      return "none";
    case Report::Buffer::ZeroCopy:
      return "zero-copy";
    case Report::Buffer::Copy:
      return "copy";
    case Report::Buffer::Pinned:
      return "pinned";
    case Report::Buffer::Resident:
      return "resident";
  }
  return "?";
}

namespace detail {
namespace {

[[noreturn]] void invalid(const char* name, int position, const std::string& why) {
  throw Error(Error::Kind::InvalidArgument,
              std::string("argument ") + std::to_string(position) + " (" + name + ") " + why,
              position);
}

void check_ld(const char* name, int position, int64_t ld, gemm_rules::Least<int64_t> least) {
  if (ld < least.value)
    invalid(name, position,
            "= " + std::to_string(ld) + " is too small: must be at least " + least.rule + " = " +
                std::to_string(least.value));
}

}  // namespace

void check_layout(int layout, int position) {
  if (layout != TANDEM_ROW_MAJOR && layout != TANDEM_COL_MAJOR)
    invalid("layout", position,
            "= " + std::to_string(layout) + " is not 101 (row-major) or 102 (column-major)");
}

template <class T>
void check_gemm(int lay, int oa, int ob, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, const Positions& at) {
  const bool row = lay == TANDEM_ROW_MAJOR;
  const bool ta = oa != TANDEM_NO_TRANS, tb = ob != TANDEM_NO_TRANS;
  switch (gemm_rules::first_invalid(lay, oa, ob, m, n, k, alpha, a, lda, b, ldb, c, ldc)) {
    case 0:
      break;
    case 1:
      check_layout(lay, at[1]);
      break;
    case 2:
      invalid("trans_a", at[2], "= " + std::to_string(oa) + " is not 111, 112 or 113");
    case 3:
      invalid("trans_b", at[3], "= " + std::to_string(ob) + " is not 111, 112 or 113");
    case 4:
      invalid("m", at[4], "= " + std::to_string(m) + " is negative");
    case 5:
      invalid("n", at[5], "= " + std::to_string(n) + " is negative");
    case 6:
      invalid("k", at[6], "= " + std::to_string(k) + " is negative");
    case 8:
      invalid("a", at[8], "is NULL");
    case 9:
      check_ld("lda", at[9], lda, gemm_rules::least_lda(row, ta, m, k));
      break;
    case 10:
      invalid("b", at[10], "is NULL");
    case 11:
      check_ld("ldb", at[11], ldb, gemm_rules::least_ldb(row, tb, n, k));
      break;
    case 13:
      invalid("c", at[13], "is NULL");
    default:
      check_ld("ldc", at[14], ldc, gemm_rules::least_ldc(row, m, n));
      break;
  }
  for (int64_t v : {m, n, k, lda, ldb, ldc})
    if (!cpu_blas::fits(v))
      throw Error(Error::Kind::TooLarge, "size or leading dimension " + std::to_string(v) +
                                             " exceeds the CPU BLAS's 32-bit integer range");
}

#define INSTANTIATE(T)                                                                        \
  template void check_gemm<T>(int, int, int, int64_t, int64_t, int64_t, T, const T*, int64_t, \
                              const T*, int64_t, T*, int64_t, const Positions&);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace detail

template <class T>
void gemm(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, const Options& options,
          Report* report) {
  try {
    detail::check_gemm(static_cast<int>(layout), static_cast<int>(op_a), static_cast<int>(op_b), m,
                       n, k, alpha, a, lda, b, ldb, c, ldc);
  } catch (const Error& e) {
    throw Error(e.kind(),
                detail::routine_name(detail::precision_of<T>(), "gemm").str() + ": " + e.what(),
                e.argument());
  }

  detail::Problem<T> p = detail::gemm_rules::row_major(
      static_cast<int>(layout), static_cast<int>(op_a), static_cast<int>(op_b), m, n, k, alpha, a,
      lda, b, ldb, beta, c, ldc);
  detail::run_call(p, m, n, k, layout, options, report, true,
                   [&] { return detail::plan_call(p, options); });
}

#define INSTANTIATE(T)                                                                             \
  template void gemm<T>(Layout, Op, Op, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                        int64_t, T, T*, int64_t, const Options&, Report*);
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem
