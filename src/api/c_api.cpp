// The C interface: forwards to tandem::gemm<T> (s, d, c, z) and turns every exception into a status
// and a per-thread message. Nothing is thrown across this boundary.
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdint>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "base/precision.hpp"
#include "tandem/plan.h"
#include "tandem/plan.hpp"
#include "tandem/tandem.h"
#include "tandem/tandem.hpp"

namespace {

thread_local std::string t_last_error;

// Runs f, its exceptions turned into the C interface's status: 0, an invalid argument's position,
// or a negative failure, described by tandem_last_error().
template <class F>
int status(F&& f) noexcept {
  try {
    t_last_error.clear();
    f();
    return 0;
  } catch (const tandem::Error& e) {
    t_last_error = e.what();
    if (e.kind() == tandem::Error::Kind::InvalidArgument) return e.argument();
    return e.kind() == tandem::Error::Kind::TooLarge ? TANDEM_ERROR_TOO_LARGE
                                                     : TANDEM_ERROR_RUNTIME;
  } catch (const std::bad_alloc&) {
    t_last_error = "out of host memory";
  } catch (const std::exception& e) {
    t_last_error = e.what();
  } catch (...) {
    t_last_error = "unknown error";
  }
  return TANDEM_ERROR_RUNTIME;
}

template <class T>
int call(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
         int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) noexcept {
  return status([&] {
    tandem::gemm<T>(static_cast<tandem::Layout>(layout), static_cast<tandem::Op>(trans_a),
                    static_cast<tandem::Op>(trans_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  });
}

}  // namespace

extern "C" int tandem_sgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                            float beta, float* c, int64_t ldc) {
  return call<float>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

extern "C" int tandem_dgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            double alpha, const double* a, int64_t lda, const double* b,
                            int64_t ldb, double beta, double* c, int64_t ldc) {
  return call<double>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

namespace {

// The complex forms take alpha and beta by address, as CBLAS does; a NULL one is an invalid
// argument at its position (7, 12), C untouched.
template <class T>
int complex_call(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                 const void* alpha, const void* a, int64_t lda, const void* b, int64_t ldb,
                 const void* beta, void* c, int64_t ldc) noexcept {
  const char* routine = std::is_same_v<T, std::complex<float>> ? "cgemm" : "zgemm";
  for (const auto& [scalar, position, name] :
       {std::tuple{alpha, 7, "alpha"}, std::tuple{beta, 12, "beta"}})
    if (scalar == nullptr) {
      t_last_error = std::string(routine) + ": argument " + std::to_string(position) + " (" + name +
                     ") is NULL";
      return position;
    }
  return call<T>(layout, trans_a, trans_b, m, n, k, *static_cast<const T*>(alpha),
                 static_cast<const T*>(a), lda, static_cast<const T*>(b), ldb,
                 *static_cast<const T*>(beta), static_cast<T*>(c), ldc);
}

}  // namespace

extern "C" int tandem_cgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            const void* alpha, const void* a, int64_t lda, const void* b,
                            int64_t ldb, const void* beta, void* c, int64_t ldc) {
  return complex_call<std::complex<float>>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                                           beta, c, ldc);
}

extern "C" int tandem_zgemm(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                            const void* alpha, const void* a, int64_t lda, const void* b,
                            int64_t ldb, const void* beta, void* c, int64_t ldc) {
  return complex_call<std::complex<double>>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, b,
                                            ldb, beta, c, ldc);
}

namespace {

// NULL where a scalar was needed: its position, named (C untouched).
int null_scalar(const char* routine, int position, const char* name) {
  t_last_error =
      std::string(routine) + ": argument " + std::to_string(position) + " (" + name + ") is NULL";
  return position;
}

// A grouped batch as the C++ interface's groups: the arrays (one entry per group, the operand
// pointers one per problem, the groups' problems one after another) checked for NULL first.
template <class T, class S>
int grouped(const char* routine, int layout, const int* trans_a, const int* trans_b,
            const int64_t* m, const int64_t* n, const int64_t* k, const S* alpha,
            const void* const* a, const int64_t* lda, const void* const* b, const int64_t* ldb,
            const S* beta, void* const* c, const int64_t* ldc, int64_t group_count,
            const int64_t* group_size) noexcept {
  if (group_count > 0)
    for (const auto& [array, position, name] :
         {std::tuple{static_cast<const void*>(trans_a), 2, "trans_a"},
          std::tuple{static_cast<const void*>(trans_b), 3, "trans_b"},
          std::tuple{static_cast<const void*>(m), 4, "m"},
          std::tuple{static_cast<const void*>(n), 5, "n"},
          std::tuple{static_cast<const void*>(k), 6, "k"},
          std::tuple{static_cast<const void*>(alpha), 7, "alpha"},
          std::tuple{static_cast<const void*>(lda), 9, "lda"},
          std::tuple{static_cast<const void*>(ldb), 11, "ldb"},
          std::tuple{static_cast<const void*>(beta), 12, "beta"},
          std::tuple{static_cast<const void*>(ldc), 14, "ldc"},
          std::tuple{static_cast<const void*>(group_size), 16, "group_size"}})
      if (array == nullptr) return null_scalar(routine, position, name);
  return status([&] {
    std::vector<tandem::GemmGroup<T>> groups(
        static_cast<size_t>(std::max<int64_t>(group_count, 0)));
    int64_t first = 0;
    for (size_t g = 0; g < groups.size(); ++g) {
      tandem::GemmGroup<T>& x = groups[g];
      x.op_a = static_cast<tandem::Op>(trans_a[g]);
      x.op_b = static_cast<tandem::Op>(trans_b[g]);
      x.m = m[g], x.n = n[g], x.k = k[g];
      x.alpha = static_cast<const T*>(static_cast<const void*>(alpha))[g];
      x.beta = static_cast<const T*>(static_cast<const void*>(beta))[g];
      x.lda = lda[g], x.ldb = ldb[g], x.ldc = ldc[g];
      x.size = group_size[g];
      // The operand arrays may be NULL where no problem reads them; the C++ checks say where.
      x.a = a != nullptr ? reinterpret_cast<const T* const*>(a) + first : nullptr;
      x.b = b != nullptr ? reinterpret_cast<const T* const*>(b) + first : nullptr;
      x.c = c != nullptr ? reinterpret_cast<T* const*>(c) + first : nullptr;
      // Saturated: sizes summing past int64_t are refused by the C++ checks, naming group_size.
      if (x.size > 0) first = x.size > INT64_MAX - first ? INT64_MAX : first + x.size;
    }
    tandem::gemm_batch<T>(static_cast<tandem::Layout>(layout), groups.data(), group_count);
  });
}

template <class T>
int strided(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, T alpha,
            const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
            int64_t stride_b, T beta, void* c, int64_t ldc, int64_t stride_c,
            int64_t count) noexcept {
  return status([&] {
    tandem::gemm_batch_strided<T>(
        static_cast<tandem::Layout>(layout), static_cast<tandem::Op>(trans_a),
        static_cast<tandem::Op>(trans_b), m, n, k, alpha, static_cast<const T*>(a), lda, stride_a,
        static_cast<const T*>(b), ldb, stride_b, beta, static_cast<T*>(c), ldc, stride_c, count);
  });
}

}  // namespace

#define TANDEM_REAL_BATCH(T, p)                                                                   \
  extern "C" int tandem_##p##gemm_batch_strided(                                                  \
      int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, \
      int64_t lda, int64_t stride_a, const T* b, int64_t ldb, int64_t stride_b, T beta, T* c,     \
      int64_t ldc, int64_t stride_c, int64_t count) {                                             \
    return strided<T>(layout, trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb,         \
                      stride_b, beta, c, ldc, stride_c, count);                                   \
  }                                                                                               \
  extern "C" int tandem_##p##gemm_batch(                                                          \
      int layout, const int* trans_a, const int* trans_b, const int64_t* m, const int64_t* n,     \
      const int64_t* k, const T* alpha, const T* const* a, const int64_t* lda, const T* const* b, \
      const int64_t* ldb, const T* beta, T* const* c, const int64_t* ldc, int64_t group_count,    \
      const int64_t* group_size) {                                                                \
    return grouped<T>(#p "gemm_batch", layout, trans_a, trans_b, m, n, k, alpha,                  \
                      reinterpret_cast<const void* const*>(a), lda,                               \
                      reinterpret_cast<const void* const*>(b), ldb, beta,                         \
                      reinterpret_cast<void* const*>(c), ldc, group_count, group_size);           \
  }
TANDEM_REAL_BATCH(float, s)
TANDEM_REAL_BATCH(double, d)
#undef TANDEM_REAL_BATCH

// The complex batches take their scalars by address (strided) or as arrays of complex values
// (grouped), as tandem_cgemm does.
#define TANDEM_COMPLEX_BATCH(T, p)                                                                \
  extern "C" int tandem_##p##gemm_batch_strided(                                                  \
      int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, const void* alpha,   \
      const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, \
      const void* beta, void* c, int64_t ldc, int64_t stride_c, int64_t count) {                  \
    if (alpha == nullptr) return null_scalar(#p "gemm_batch_strided", 7, "alpha");                \
    if (beta == nullptr) return null_scalar(#p "gemm_batch_strided", 14, "beta");                 \
    return strided<T>(layout, trans_a, trans_b, m, n, k, *static_cast<const T*>(alpha), a, lda,   \
                      stride_a, b, ldb, stride_b, *static_cast<const T*>(beta), c, ldc, stride_c, \
                      count);                                                                     \
  }                                                                                               \
  extern "C" int tandem_##p##gemm_batch(                                                          \
      int layout, const int* trans_a, const int* trans_b, const int64_t* m, const int64_t* n,     \
      const int64_t* k, const void* alpha, const void* const* a, const int64_t* lda,              \
      const void* const* b, const int64_t* ldb, const void* beta, void* const* c,                 \
      const int64_t* ldc, int64_t group_count, const int64_t* group_size) {                       \
    return grouped<T>(#p "gemm_batch", layout, trans_a, trans_b, m, n, k,                         \
                      static_cast<const T*>(alpha), a, lda, b, ldb, static_cast<const T*>(beta),  \
                      c, ldc, group_count, group_size);                                           \
  }
TANDEM_COMPLEX_BATCH(std::complex<float>, c)
TANDEM_COMPLEX_BATCH(std::complex<double>, z)
#undef TANDEM_COMPLEX_BATCH

// Plans (tandem/plan.h): a handle holds a tandem::Plan of one element type; a run started
// asynchronously holds the C++ run's future until tandem_run_wait.
struct tandem_plan {
  std::variant<tandem::Plan<float>, tandem::Plan<double>, tandem::Plan<std::complex<float>>,
               tandem::Plan<std::complex<double>>>
      plan;
};
struct tandem_run {
  std::future<tandem::Report> done;
};
struct tandem_resident {
  std::variant<tandem::Resident<float>, tandem::Resident<double>,
               tandem::Resident<std::complex<float>>, tandem::Resident<std::complex<double>>>
      resident;
};

namespace {

template <class T>
int plan_create(int layout, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int64_t lda,
                int64_t ldb, int64_t ldc, tandem_plan** plan) noexcept {
  if (plan == nullptr)
    return null_scalar(
        tandem::detail::routine_name(tandem::detail::precision_of<T>(), "plan_create").c_str(), 10,
        "plan");
  *plan = nullptr;
  return status([&] {
    *plan = new tandem_plan{decltype(tandem_plan::plan)(
        std::in_place_type<tandem::Plan<T>>, static_cast<tandem::Layout>(layout),
        static_cast<tandem::Op>(trans_a), static_cast<tandem::Op>(trans_b), m, n, k, lda, ldb,
        ldc)};
  });
}

// The plan's tandem::Plan<T>, or null with the failure recorded: a NULL plan, or one of another
// element type, at `position`.
template <class T>
const tandem::Plan<T>* plan_of(const tandem_plan* plan, const char* routine, int position) {
  const std::string where = std::string(routine) + ": argument " + std::to_string(position);
  if (plan == nullptr) {
    t_last_error = where + " (plan) is NULL";
    return nullptr;
  }
  const auto* p = std::get_if<tandem::Plan<T>>(&plan->plan);
  if (p == nullptr) t_last_error = where + " (plan) was made for another element type";
  return p;
}

template <class T>
int plan_run(const char* routine, T alpha, const T* a, const T* b, T beta, T* c,
             const tandem_plan* plan, bool async, tandem_run** run) noexcept {
  const tandem::Plan<T>* p = plan_of<T>(plan, routine, 6);
  if (p == nullptr) return 6;
  if (!async) return status([&] { p->run(alpha, a, b, beta, c); });
  if (run == nullptr) return null_scalar(routine, 7, "run");
  *run = nullptr;
  return status([&] { *run = new tandem_run{p->run_async(alpha, a, b, beta, c)}; });
}

// The failure just recorded, at C++ position `from`, moved to `to` (named `name`) in its message:
// a C function's arguments sit elsewhere than its C++ call's. Returns `to`.
int c_position(int from, int to, const char* name) {
  const std::string at = "argument " + std::to_string(from) + " (";
  if (const size_t i = t_last_error.find(at); i != std::string::npos) {
    const size_t end = t_last_error.find(')', i);
    t_last_error.replace(i, end == std::string::npos ? at.size() : end + 1 - i,
                         "argument " + std::to_string(to) + " (" + name + ")");
  }
  return to;
}

// A run with `resident` in place of the operand it stands for (whose pointer must be NULL):
// plan 6, resident 7, run 8.
template <class T>
int plan_run_resident(const char* routine, T alpha, const T* a, const T* b, T beta, T* c,
                      const tandem_plan* plan, const tandem_resident* resident, bool async,
                      tandem_run** run) noexcept {
  const tandem::Plan<T>* p = plan_of<T>(plan, routine, 6);
  if (p == nullptr) return 6;
  const std::string where = std::string(routine) + ": argument ";
  const auto* r = resident ? std::get_if<tandem::Resident<T>>(&resident->resident) : nullptr;
  if (r == nullptr) {
    t_last_error =
        where + "7 (resident) " + (resident ? "was made for another element type" : "is NULL");
    return 7;
  }
  const bool for_a = r->operand() == 'A';
  if ((for_a ? static_cast<const void*>(a) : b) != nullptr) {
    t_last_error = where + (for_a ? "2 (a)" : "3 (b)") + " must be NULL: the resident " +
                   std::string(1, r->operand()) + " stands for it";
    return for_a ? 2 : 3;
  }
  if (async && run == nullptr) return null_scalar(routine, 8, "run");
  if (async) *run = nullptr;
  const int got = status([&] {
    if (!async)
      for_a ? p->run(alpha, *r, b, beta, c) : p->run(alpha, a, *r, beta, c);
    else
      *run = new tandem_run{for_a ? p->run_async(alpha, *r, b, beta, c)
                                  : p->run_async(alpha, a, *r, beta, c)};
  });
  // The C++ run names the handle at the operand's place (a 2, b 3), whose pointer here is NULL.
  return got == (for_a ? 2 : 3) ? c_position(got, 7, "resident") : got;
}

}  // namespace

extern "C" int tandem_plan_resident(const tandem_plan* plan, char operand, const void* x,
                                    tandem_resident** resident) {
  const char* routine = "plan_resident";
  if (resident == nullptr) return null_scalar(routine, 4, "resident");
  *resident = nullptr;
  if (plan == nullptr) return null_scalar(routine, 1, "plan");
  if (operand != 'A' && operand != 'B' && operand != 'a' && operand != 'b') {
    t_last_error = std::string(routine) + ": argument 2 (operand) must be 'A' or 'B'";
    return 2;
  }
  const bool for_a = operand == 'A' || operand == 'a';
  const int got = status([&] {
    std::visit(
        [&](const auto& p) {
          using T = typename std::decay_t<decltype(p)>::element_type;
          const T* host = static_cast<const T*>(x);
          *resident = new tandem_resident{{for_a ? p.resident_a(host) : p.resident_b(host)}};
        },
        plan->plan);
  });
  return got == 1 ? c_position(1, 3, "x") : got;  // the C++ call's argument 1 is x here
}

extern "C" int tandem_resident_update(tandem_resident* resident) {
  if (resident == nullptr) return null_scalar("resident_update", 1, "resident");
  return status([&] { std::visit([](auto& r) { r.update(); }, resident->resident); });
}

extern "C" int64_t tandem_resident_bytes(const tandem_resident* resident) {
  return resident ? std::visit([](const auto& r) { return r.device_bytes(); }, resident->resident)
                  : 0;
}

extern "C" void tandem_resident_destroy(tandem_resident* resident) { delete resident; }

#define TANDEM_PLAN_CREATE(T, p)                                                          \
  extern "C" int tandem_##p##plan_create(int layout, int trans_a, int trans_b, int64_t m, \
                                         int64_t n, int64_t k, int64_t lda, int64_t ldb,  \
                                         int64_t ldc, tandem_plan** plan) {               \
    return plan_create<T>(layout, trans_a, trans_b, m, n, k, lda, ldb, ldc, plan);        \
  }
TANDEM_PLAN_CREATE(float, s)
TANDEM_PLAN_CREATE(double, d)
TANDEM_PLAN_CREATE(std::complex<float>, c)
TANDEM_PLAN_CREATE(std::complex<double>, z)
#undef TANDEM_PLAN_CREATE

#define TANDEM_REAL_PLAN(T, p)                                                                \
  extern "C" int tandem_##p##plan_run(T alpha, const T* a, const T* b, T beta, T* c,          \
                                      const tandem_plan* plan) {                              \
    return plan_run<T>(#p "plan_run", alpha, a, b, beta, c, plan, false, nullptr);            \
  }                                                                                           \
  extern "C" int tandem_##p##plan_run_async(T alpha, const T* a, const T* b, T beta, T* c,    \
                                            const tandem_plan* plan, tandem_run** run) {      \
    return plan_run<T>(#p "plan_run_async", alpha, a, b, beta, c, plan, true, run);           \
  }                                                                                           \
  extern "C" int tandem_##p##plan_run_resident(T alpha, const T* a, const T* b, T beta, T* c, \
                                               const tandem_plan* plan,                       \
                                               const tandem_resident* resident) {             \
    return plan_run_resident<T>(#p "plan_run_resident", alpha, a, b, beta, c, plan, resident, \
                                false, nullptr);                                              \
  }                                                                                           \
  extern "C" int tandem_##p##plan_run_resident_async(                                         \
      T alpha, const T* a, const T* b, T beta, T* c, const tandem_plan* plan,                 \
      const tandem_resident* resident, tandem_run** run) {                                    \
    return plan_run_resident<T>(#p "plan_run_resident_async", alpha, a, b, beta, c, plan,     \
                                resident, true, run);                                         \
  }
TANDEM_REAL_PLAN(float, s)
TANDEM_REAL_PLAN(double, d)
#undef TANDEM_REAL_PLAN

#define TANDEM_COMPLEX_PLAN(T, p)                                                                  \
  extern "C" int tandem_##p##plan_run(const void* alpha, const void* a, const void* b,             \
                                      const void* beta, void* c, const tandem_plan* plan) {        \
    if (alpha == nullptr) return null_scalar(#p "plan_run", 1, "alpha");                           \
    if (beta == nullptr) return null_scalar(#p "plan_run", 4, "beta");                             \
    return plan_run<T>(#p "plan_run", *static_cast<const T*>(alpha), static_cast<const T*>(a),     \
                       static_cast<const T*>(b), *static_cast<const T*>(beta), static_cast<T*>(c), \
                       plan, false, nullptr);                                                      \
  }                                                                                                \
  extern "C" int tandem_##p##plan_run_async(const void* alpha, const void* a, const void* b,       \
                                            const void* beta, void* c, const tandem_plan* plan,    \
                                            tandem_run** run) {                                    \
    if (alpha == nullptr) return null_scalar(#p "plan_run_async", 1, "alpha");                     \
    if (beta == nullptr) return null_scalar(#p "plan_run_async", 4, "beta");                       \
    return plan_run<T>(#p "plan_run_async", *static_cast<const T*>(alpha),                         \
                       static_cast<const T*>(a), static_cast<const T*>(b),                         \
                       *static_cast<const T*>(beta), static_cast<T*>(c), plan, true, run);         \
  }                                                                                                \
  extern "C" int tandem_##p##plan_run_resident(const void* alpha, const void* a, const void* b,    \
                                               const void* beta, void* c, const tandem_plan* plan, \
                                               const tandem_resident* resident) {                  \
    if (alpha == nullptr) return null_scalar(#p "plan_run_resident", 1, "alpha");                  \
    if (beta == nullptr) return null_scalar(#p "plan_run_resident", 4, "beta");                    \
    return plan_run_resident<T>(#p "plan_run_resident", *static_cast<const T*>(alpha),             \
                                static_cast<const T*>(a), static_cast<const T*>(b),                \
                                *static_cast<const T*>(beta), static_cast<T*>(c), plan, resident,  \
                                false, nullptr);                                                   \
  }                                                                                                \
  extern "C" int tandem_##p##plan_run_resident_async(                                              \
      const void* alpha, const void* a, const void* b, const void* beta, void* c,                  \
      const tandem_plan* plan, const tandem_resident* resident, tandem_run** run) {                \
    if (alpha == nullptr) return null_scalar(#p "plan_run_resident_async", 1, "alpha");            \
    if (beta == nullptr) return null_scalar(#p "plan_run_resident_async", 4, "beta");              \
    return plan_run_resident<T>(#p "plan_run_resident_async", *static_cast<const T*>(alpha),       \
                                static_cast<const T*>(a), static_cast<const T*>(b),                \
                                *static_cast<const T*>(beta), static_cast<T*>(c), plan, resident,  \
                                true, run);                                                        \
  }
TANDEM_COMPLEX_PLAN(std::complex<float>, c)
TANDEM_COMPLEX_PLAN(std::complex<double>, z)
#undef TANDEM_COMPLEX_PLAN

extern "C" int tandem_run_ready(const tandem_run* run) {
  return run == nullptr || run->done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

extern "C" int tandem_run_wait(tandem_run* run) {
  if (run == nullptr) return 0;
  const std::unique_ptr<tandem_run> owned(run);
  return status([&] { owned->done.get(); });
}

extern "C" void tandem_plan_destroy(tandem_plan* plan) { delete plan; }

extern "C" const char* tandem_last_error(void) { return t_last_error.c_str(); }

// The header this library was built with names its version, so a program can compare the two.
extern "C" const char* tandem_version(void) { return TANDEM_VERSION_STRING; }
