// tandem::gemm<T>: the boundary where BLAS semantics are enforced. Arguments are checked (C is
// untouched on an error), column-major calls become row-major ones (C^T = op(B)^T op(A)^T), and
// the cases BLAS defines without a product (m or n = 0, k = 0, alpha = 0) are done here, so that
// neither backend ever sees them.
#include <algorithm>
#include <cstdio>
#include <string>

#include "config.hpp"
#include "cpu_blas.hpp"
#include "executor.hpp"
#include "log.hpp"
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
  }
  return "?";
}

namespace {

const char* routine(float) { return "sgemm"; }
const char* routine(double) { return "dgemm"; }

[[noreturn]] void invalid(const char* name, int position, const std::string& why) {
  throw Error(Error::Kind::InvalidArgument,
              std::string("argument ") + std::to_string(position) + " (" + name + ") " + why,
              position);
}

void check_ld(const char* name, int position, int64_t ld, int64_t minimum, const char* rule) {
  const int64_t need = std::max<int64_t>(1, minimum);
  if (ld < need)
    invalid(name, position,
            "= " + std::to_string(ld) + " is too small: must be at least " + rule + " = " +
                std::to_string(need));
}

// Checks the arguments in signature order, so the first invalid one is the one reported.
template <class T>
void check(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
           int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc) {
  const int lay = static_cast<int>(layout), oa = static_cast<int>(op_a),
            ob = static_cast<int>(op_b);
  if (lay != TANDEM_ROW_MAJOR && lay != TANDEM_COL_MAJOR)
    invalid("layout", 1,
            "= " + std::to_string(lay) + " is not 101 (row-major) or 102 (column-major)");
  auto valid_op = [](int v) {
    return v == TANDEM_NO_TRANS || v == TANDEM_TRANS || v == TANDEM_CONJ_TRANS;
  };
  if (!valid_op(oa)) invalid("trans_a", 2, "= " + std::to_string(oa) + " is not 111, 112 or 113");
  if (!valid_op(ob)) invalid("trans_b", 3, "= " + std::to_string(ob) + " is not 111, 112 or 113");
  if (m < 0) invalid("m", 4, "= " + std::to_string(m) + " is negative");
  if (n < 0) invalid("n", 5, "= " + std::to_string(n) + " is negative");
  if (k < 0) invalid("k", 6, "= " + std::to_string(k) + " is negative");

  const bool row = lay == TANDEM_ROW_MAJOR;
  const bool ta = oa != TANDEM_NO_TRANS, tb = ob != TANDEM_NO_TRANS;
  const bool product = m > 0 && n > 0 && k > 0 && alpha != T(0);
  // Stored A is m x k (no transpose) or k x m; its leading dimension spans a row (row-major) or
  // a column (column-major) of that stored matrix.
  if (product && a == nullptr) invalid("a", 8, "is NULL");
  if (row == !ta)
    check_ld("lda", 9, lda, k, "max(1, k)");
  else
    check_ld("lda", 9, lda, m, "max(1, m)");
  if (product && b == nullptr) invalid("b", 10, "is NULL");
  if (row == !tb)
    check_ld("ldb", 11, ldb, n, "max(1, n)");
  else
    check_ld("ldb", 11, ldb, k, "max(1, k)");
  if (m > 0 && n > 0 && c == nullptr) invalid("c", 13, "is NULL");
  if (row)
    check_ld("ldc", 14, ldc, n, "max(1, n)");
  else
    check_ld("ldc", 14, ldc, m, "max(1, m)");

  for (int64_t v : {m, n, k, lda, ldb, ldc})
    if (!detail::cpu_blas::fits(v))
      throw Error(Error::Kind::TooLarge, "size or leading dimension " + std::to_string(v) +
                                             " exceeds the CPU BLAS's 32-bit integer range");
}

// C = beta * C over rows x cols (row-major view); beta = 0 writes zeros without reading C.
template <class T>
void scale(T* c, int64_t rows, int64_t cols, int64_t ldc, T beta) {
  if (beta == T(1)) return;
  for (int64_t i = 0; i < rows; ++i) {
    T* row = c + i * ldc;
    if (beta == T(0))
      std::fill(row, row + cols, T(0));
    else
      for (int64_t j = 0; j < cols; ++j) row[j] *= beta;
  }
}

template <class T>
void verbose(const Report& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s m=%lld n=%lld k=%lld strategy=%s gpu_rows=%lld cpu_rows=%lld cpu_threads=%d "
                "A=%s B=%s C=%s cpu=%.3fms gpu=%.3fms kernel=%.3fms total=%.3fms%s%s",
                routine(T{}), static_cast<long long>(r.m), static_cast<long long>(r.n),
                static_cast<long long>(r.k), to_string(r.strategy),
                static_cast<long long>(r.gpu_rows), static_cast<long long>(r.cpu_rows),
                r.cpu_threads, to_string(r.a), to_string(r.b), to_string(r.c),
                r.cpu_seconds() * 1e3, r.gpu_seconds() * 1e3, r.gpu_kernel_seconds * 1e3,
                r.seconds() * 1e3, r.fell_back ? " (GPU failed, CPU fallback)" : "",
                r.profile.empty() ? "" : (" profile=" + r.profile).c_str());
  detail::log_line(line);
}

}  // namespace

template <class T>
void gemm(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
          int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc, const Options& options,
          Report* report) {
  try {
    check(layout, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(routine(T{})) + ": " + e.what(), e.argument());
  }

  detail::Problem<T> p;
  const bool ta = op_a != Op::NoTrans, tb = op_b != Op::NoTrans;
  if (layout == Layout::RowMajor)
    p = {ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  else
    p = {tb, ta, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc};

  Report r;
  r.m = m;
  r.n = n;
  r.k = k;
  if (p.m == 0 || p.n == 0) {
    r.strategy = Strategy::Cpu;
  } else if (p.k == 0 || p.alpha == T(0)) {
    // No product: C = beta * C, and A and B are never read.
    r.strategy = Strategy::Cpu;
    r.cpu_rows = p.m;
    scale(p.c, p.m, p.n, p.ldc, p.beta);
  } else {
    detail::execute(p, options, r);
  }
  if (detail::env_config().verbose) verbose<T>(r);
  if (report != nullptr) *report = std::move(r);
}

template void gemm<float>(Layout, Op, Op, int64_t, int64_t, int64_t, float, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t, const Options&, Report*);
template void gemm<double>(Layout, Op, Op, int64_t, int64_t, int64_t, double, const double*,
                           int64_t, const double*, int64_t, double, double*, int64_t,
                           const Options&, Report*);

}  // namespace tandem
