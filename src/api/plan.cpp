// tandem::Plan (include/tandem/plan.hpp): a GEMM's shape checked and planned once, its kernels
// built at creation; each run checks its operands, finds the plan kept for what else a plan
// depends on (whether C is read, and which context's pinned memory each operand lies in: what
// plan/ reads of a call beyond its shape), and runs it as tandem::gemm runs its own plan
// (api/call.hpp), without planning again and outside auto's watch (a plan is the caller's, fixed).
#include "tandem/plan.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api/call.hpp"
#include "api/checks.hpp"
#include "api/gemm_rules.hpp"
#include "base/after_fork.hpp"
#include "base/precision.hpp"
#include "gpu/device.hpp"
#include "gpu/pinned_memory.hpp"
#include "gpu/programs.hpp"
#include "plan/plan.hpp"
#include "profile/store.hpp"

namespace tandem {
namespace detail {
namespace {

// Where tandem::gemm's arguments sit in the plan's constructor (the shape) and in a run (the
// scalars and operands); 0: not an argument there (checked already, or a stand-in).
constexpr Positions kCreatePositions = {0, 1, 2, 3, 4, 5, 6, 0, 0, 7, 0, 8, 0, 0, 9};
constexpr Positions kRunPositions = {0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 3, 0, 4, 5, 0};

// What a run's plan depends on beyond the shape.
struct RunKey {
  bool reads_c = false;                                 // beta != 0
  const void* pinned[3] = {nullptr, nullptr, nullptr};  // A's, B's, C's pinned context, or null
  bool operator==(const RunKey& o) const {
    return reads_c == o.reads_c && pinned[0] == o.pinned[0] && pinned[1] == o.pinned[1] &&
           pinned[2] == o.pinned[2];
  }
};

template <class T>
RunKey key_of(const Problem<T>& p) {
  RunKey key;
  key.reads_c = p.beta != T(0);
  if (gpu::any_pinned_block()) {
    key.pinned[0] = gpu::pinned_context(p.a, p.a_bytes());
    key.pinned[1] = gpu::pinned_context(p.b, p.b_bytes());
    key.pinned[2] = gpu::pinned_context(p.c, p.c_bytes());
  }
  return key;
}

// The name a plan's errors begin with: "sgemm plan".
template <class T>
std::string plan_routine() {
  return routine_name(precision_of<T>(), "gemm").str() + " plan";
}

bool uses_retired(const Plan& plan) {
  return std::any_of(plan.parts.begin(), plan.parts.end(), [](const DevicePart& part) {
    return part.device && gpu::retired(*part.device);
  });
}

// Builds the programs the plan's devices will run, so that the first run does not (a build that
// fails is the first run's to report, as a device failure with its fallback).
template <class T>
void build_kernels(const Plan& plan, const Problem<T>& p) {
  for (const DevicePart& part : plan.parts) {
    if (!part.device || !part.params) continue;
    try {
      gpu::prebuild(*part.device, precision_of<T>(), p.trans_a, p.trans_b, *part.params);
    } catch (const Error&) {
    }
  }
}

}  // namespace

template <class T>
struct PlanState {
  Layout layout = Layout::RowMajor;
  Op op_a = Op::NoTrans, op_b = Op::NoTrans;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  Options options;
  // The plans made so far, by what they depend on; the first is the creation's (ordinary memory,
  // beta = 0). A run that meets a new key plans once and keeps it (at most kKept; past that, each
  // such run plans for itself). They hold for the profiles as read at `profiles_seen`
  // (profile::changes()): once profiles are read again (profile::forget), each is made again.
  static constexpr size_t kKept = 16;
  mutable std::mutex mutex;
  mutable std::vector<std::pair<RunKey, std::shared_ptr<const Plan>>> plans;
  mutable uint64_t profiles_seen = profile::changes();

  Problem<T> problem(T alpha, const T* a, const T* b, T beta, T* c) const {
    return gemm_rules::row_major(static_cast<int>(layout), static_cast<int>(op_a),
                                 static_cast<int>(op_b), m, n, k, alpha, a, lda, b, ldb, beta, c,
                                 ldc);
  }

  // The kept plan for p's key, or one made now and kept. A kept plan that gives rows to a device
  // since retired (gpu::retire: its queues could not be drained after a failure) is made again
  // without it, as tandem::gemm's next call would be.
  std::shared_ptr<const Plan> plan_for(const Problem<T>& p) const {
    // In a child forked after OpenCL was used, the kept plans' devices are the parent's, which
    // would wait forever here: the call is planned afresh, and finds no device (after_fork.hpp).
    if (after_fork::opencl_lost()) return std::make_shared<const Plan>(plan_call(p, options));
    const RunKey key = key_of(p);
    const auto kept_for = [&]() -> std::shared_ptr<const Plan> {
      const uint64_t profiles = profile::changes();
      if (profiles != profiles_seen) {
        plans.clear();
        profiles_seen = profiles;
      }
      for (auto it = plans.begin(); it != plans.end(); ++it) {
        if (!(it->first == key)) continue;
        if (!uses_retired(*it->second)) return it->second;
        plans.erase(it);
        break;
      }
      return nullptr;
    };
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto plan = kept_for()) return plan;
    }
    auto made = std::make_shared<const Plan>(plan_call(p, options));
    std::lock_guard<std::mutex> lock(mutex);
    if (auto plan = kept_for()) return plan;  // another run made it meanwhile
    if (plans.size() < kKept) plans.emplace_back(key, made);
    return made;
  }

  size_t kept() const {
    std::lock_guard<std::mutex> lock(mutex);
    return plans.size();
  }

  // A run: tandem::gemm's checks of the operands (NULL refused, C untouched), then the kept plan.
  void run(T alpha, const T* a, const T* b, T beta, T* c, Report* report) const {
    try {
      check_gemm(static_cast<int>(layout), static_cast<int>(op_a), static_cast<int>(op_b), m, n, k,
                 alpha, a, lda, b, ldb, c, ldc, kRunPositions);
    } catch (const Error& e) {
      throw Error(e.kind(), plan_routine<T>() + ": " + e.what(), e.argument());
    }
    Problem<T> p = problem(alpha, a, b, beta, c);
    std::shared_ptr<const Plan> plan;
    run_call(p, m, n, k, layout, options, report, false, [&]() -> const Plan& {
      plan = plan_for(p);
      return *plan;
    });
  }
};

}  // namespace detail

template <class T>
Plan<T>::Plan(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, int64_t lda,
              int64_t ldb, int64_t ldc, const Options& options) {
  auto state = std::make_shared<detail::PlanState<T>>();
  // The shape is checked as tandem::gemm's, with stand-in operands (a run checks its own).
  const T any{};
  try {
    detail::check_gemm(static_cast<int>(layout), static_cast<int>(op_a), static_cast<int>(op_b), m,
                       n, k, T(1), &any, lda, &any, ldb, const_cast<T*>(&any), ldc,
                       detail::kCreatePositions);
    (void)detail::request(options);  // options out of range, named
  } catch (const Error& e) {
    throw Error(e.kind(), detail::plan_routine<T>() + ": " + e.what(), e.argument());
  }
  state->layout = layout;
  state->op_a = op_a;
  state->op_b = op_b;
  state->m = m;
  state->n = n;
  state->k = k;
  state->lda = lda;
  state->ldb = ldb;
  state->ldc = ldc;
  state->options = options;
  // The creation's plan: operands in ordinary memory, beta = 0, as tandem::gemm would plan them.
  const detail::Problem<T> p = state->problem(T(1), nullptr, nullptr, T(0), nullptr);
  if (p.m > 0 && p.n > 0 && p.k > 0) {
    const std::shared_ptr<const detail::Plan> plan = state->plan_for(p);
    detail::build_kernels(*plan, p);
  }
  state_ = std::move(state);
}

template <class T>
const detail::PlanState<T>& Plan<T>::state() const {
  if (!state_)
    throw Error(Error::Kind::InvalidArgument,
                detail::plan_routine<T>() + ": this plan was moved from");
  return *state_;
}

template <class T>
void Plan<T>::run(T alpha, const T* a, const T* b, T beta, T* c, Report* report) const {
  state().run(alpha, a, b, beta, c, report);
}

template <class T>
std::future<Report> Plan<T>::run_async(T alpha, const T* a, const T* b, T beta, T* c) const {
  // The run's thread holds the plan's state: the Plan may go before the run does.
  state();  // a moved-from plan is refused here, not on the run's thread
  return std::async(std::launch::async, [state = state_, alpha, a, b, beta, c] {
    Report report;
    state->run(alpha, a, b, beta, c, &report);
    return report;
  });
}

template <class T>
int64_t Plan<T>::m() const {
  return state().m;
}
template <class T>
int64_t Plan<T>::n() const {
  return state().n;
}
template <class T>
int64_t Plan<T>::k() const {
  return state().k;
}

template <class T>
size_t Plan<T>::plans_kept() const {
  return state().kept();
}

#define INSTANTIATE(T) template class Plan<T>;
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem
