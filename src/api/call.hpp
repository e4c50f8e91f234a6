// One checked GEMM call from its row-major problem on: the cases BLAS defines without a product
// done here, else the call's plan (made by the caller's `make_plan`, by value or by reference:
// tandem::gemm plans each call, a tandem::Plan keeps its plans) run by the executor, then the
// verbose line and the report. One place for tandem::gemm (src/api/gemm.cpp) and tandem::Plan's
// runs (src/api/plan.cpp).
#pragma once

#include <optional>
#include <utility>

#include "api/gemm_rules.hpp"
#include "base/clock.hpp"
#include "base/config.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/problem.hpp"
#include "plan/plan.hpp"
#include "plan/watch.hpp"
#include "run/executor.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// Runs `p` (checked, row-major; the caller's `m`, `n`, `k` and `layout` for the report), filling
// `*report` where it is not null. `watched`: auto's watch times the call against the CPU alone
// (plan/watch.hpp; a plan made by make_plan inside the call registers its class).
template <class T, class MakePlan>
void run_call(Problem<T>& p, int64_t m, int64_t n, int64_t k, Layout layout, const Options& options,
              Report* report, bool watched, MakePlan&& make_plan) {
  p.timed = report != nullptr || env_config().verbose;
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
    gemm_rules::scale(p.c, p.m, p.n, p.ldc, p.beta);
  } else {
    r.t_start = clock::now_ns();
    std::optional<watch::Call> call;  // what auto planned, and then how long the call took
    if (watched) call.emplace();
    // A plan returned by value lives to the end of this block.
    const Plan& plan = std::forward<MakePlan>(make_plan)();
    execute(p, plan, options, r);
    if (call) call->ran(r);
  }
  if (env_config().verbose)
    log_call(routine_name(precision_of<T>(), "gemm").c_str(), r, layout == Layout::ColMajor);
  if (report != nullptr) *report = std::move(r);
}

}  // namespace tandem::detail
