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
#include "base/log.hpp"
#include "base/precision.hpp"
#include "gpu/device.hpp"
#include "gpu/pinned_memory.hpp"
#include "gpu/programs.hpp"
#include "gpu/share.hpp"
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

// An operand's name as an argument: 'A' is "a".
std::string argument_name(char operand) { return std::string(1, operand == 'A' ? 'a' : 'b'); }

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

  // A run: tandem::gemm's checks of the operands (NULL refused, C untouched), then the kept plan;
  // `resident`: the resident operand (A or B) whose copies it computes from, or null.
  void run(T alpha, const T* a, const T* b, T beta, T* c, Report* report,
           ResidentState<T>* resident = nullptr) const {
    try {
      check_gemm(static_cast<int>(layout), static_cast<int>(op_a), static_cast<int>(op_b), m, n, k,
                 alpha, a, lda, b, ldb, c, ldc, kRunPositions);
    } catch (const Error& e) {
      throw Error(e.kind(), plan_routine<T>() + ": " + e.what(), e.argument());
    }
    Problem<T> p = problem(alpha, a, b, beta, c);
    std::shared_ptr<const Plan> plan;
    std::shared_ptr<const gpu::KeptOn> kept;  // held to the run's end
    run_call(p, m, n, k, layout, options, report, false, [&]() -> const Plan& {
      plan = plan_for(p);
      if (resident) {
        kept = resident->copies_for(*plan, p);
        (resident->role == 'A' ? p.kept_a : p.kept_b) = kept.get();
      }
      return *plan;
    });
  }
};

// What a resident operand holds: its plan, the caller's matrix and the copies kept on the plan's
// discrete devices (gpu::KeptOn). Copies are published whole: a run takes those published as it
// starts, after adding any its plan's devices lack (a run whose plan reads B in another layout
// on a device, a plan for another memory or beta); an update publishes new ones. A run holds the
// copies it took until it ends.
template <class T>
struct ResidentState {
  std::shared_ptr<const PlanState<T>> plan;
  const T* host = nullptr;
  char operand = 'A';
  // Which operand of the row-major view it stands for: 'B' (each device needs all of it), or 'A'
  // (each device keeps all its rows, and a share computes from those of its band).
  char role = 'B';
  std::mutex mutex;
  std::shared_ptr<const gpu::KeptOn> copies;
  // Devices that could not take a copy since the last update: their runs send B.
  std::vector<const gpu::Device*> declined;

  ResidentState() = default;
  ResidentState(const ResidentState&) = delete;
  ResidentState& operator=(const ResidentState&) = delete;
  // In a child forked after OpenCL was used, the copies are never freed (no OpenCL call can return
  // there: after_fork.hpp).
  ~ResidentState() {
    if (copies && after_fork::opencl_lost()) new std::shared_ptr<const gpu::KeptOn>(copies);
  }

  // In a child forked after OpenCL was used, no copy is read, made or freed, and the lock (which
  // a copy in the making may have held across the fork) is not taken.
  std::shared_ptr<const gpu::KeptOn> current() {
    if (after_fork::opencl_lost()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    return copies;
  }

  // The plan's problem with this operand in its place (the other absent), as creation plans it.
  Problem<T> problem() const {
    return operand == 'A' ? plan->problem(T(1), host, nullptr, T(0), nullptr)
                          : plan->problem(T(1), nullptr, host, T(0), nullptr);
  }

  // Drops the copies made before, then copies the host's matrix to each discrete device of the
  // creation's plan: a copy that does not fit is an error (nothing is kept then), naming the
  // matrix as argument `position` (creation's 1; 0 from update(), which has none).
  void keep(int position) {
    if (after_fork::opencl_lost()) return;  // no OpenCL here: the copies stay as they were
    std::shared_ptr<const gpu::KeptOn> old;
    {
      std::lock_guard<std::mutex> lock(mutex);
      old = std::move(copies);
      declined.clear();
    }
    old.reset();  // runs in flight hold their own
    const Problem<T> p = problem();
    if (!p.has_product()) return;
    copies_for(*plan->plan_for(p), p, position);
  }

  // The copies for a run of `made` on p: those published, with a copy made now on each discrete
  // device of its parts that has none its kernel reads as it is. One that does not fit, or that
  // the device fails to take, is not made (one warning; the device sends B, and is not asked
  // again until an update); `refuse_at` (not -1: creation's or update()'s position): one that
  // does not fit is an error instead.
  std::shared_ptr<const gpu::KeptOn> copies_for(const Plan& made, const Problem<T>& p,
                                                int refuse_at = -1) {
    if (after_fork::opencl_lost()) return nullptr;
    std::lock_guard<std::mutex> lock(mutex);  // a run that makes copies holds up the others
    std::shared_ptr<gpu::KeptOn> more;
    for (const DevicePart& part : made.parts) {
      gpu::Device* device = part.device.get();
      if (!device || !gpu::is_discrete(*device) || gpu::retired(*device) ||
          std::find(declined.begin(), declined.end(), device) != declined.end() ||
          (copies && gpu::has_copy(*copies, *device, part.params, p, role == 'A')))
        continue;
      std::string why = beyond_memory(*device, p, part);
      if (why.empty()) {
        try {
          // Copies take turns with calls on a device whose driver needs it (exclusive_for), as
          // a transpose on the device is a kernel.
          const auto turn = gpu::exclusive_for({part.device});
          std::shared_ptr<gpu::KeptOperand> copy = gpu::keep(*device, part.params, p, role == 'A');
          if (!more) more = std::make_shared<gpu::KeptOn>(copies ? *copies : gpu::KeptOn{});
          more->add(*device, std::move(copy));
          continue;
        } catch (const Error& e) {
          why = e.what();
        }
      } else if (refuse_at >= 0) {
        const std::string what = refuse_at > 0 ? "argument " + std::to_string(refuse_at) + " (" +
                                                     argument_name(operand) + ")"
                                               : std::string("the resident ") + operand;
        throw Error(Error::Kind::TooLarge,
                    plan_routine<T>() + ": " + what + " cannot be kept on the devices: " + why,
                    refuse_at);
      }
      declined.push_back(device);
      warn_once("resident " + std::string(1, operand) + " " + gpu::description(*device),
                plan_routine<T>() + ": " + gpu::description(*device) + " keeps no copy of " +
                    std::string(1, operand) + " (" + why + "); its runs send it from the host");
    }
    if (more) copies = std::move(more);
    return copies;
  }

  // Why the copy would not fit beside what the part's runs need on the device (their rows of
  // op(A) and C, staged) and what resident copies hold there already, against the device's memory
  // and largest buffer; empty if it fits.
  std::string beyond_memory(gpu::Device& device, const Problem<T>& p,
                            const DevicePart& part) const {
    const auto bytes = [](int64_t elements) { return elements * static_cast<int64_t>(sizeof(T)); };
    // The copy as it will be padded and pooled (with its transposition's scratch while it is
    // made); beside it, B whole and the part's rows of A and C, or B and the part's rows of C.
    const int64_t copy = gpu::kept_bytes(part.params, p, role == 'A'),
                  runs = bytes(role == 'A' ? p.k * p.n + part.rows * p.n : part.rows * (p.k + p.n)),
                  held = gpu::resident_bytes(device);
    const gpu::DeviceInfo& di = gpu::info(device);
    const auto total = static_cast<int64_t>(di.global_mem_bytes);
    const auto largest = static_cast<int64_t>(di.max_alloc_bytes);
    if (copy + runs + held <= total && copy <= largest) return "";
    return "its copy needs " + std::to_string(copy) + " bytes on " + gpu::description(device) +
           ", beside " + std::to_string(runs) + " for this plan's runs and " +
           std::to_string(held) + " held by resident copies; the device has " +
           std::to_string(total) + " bytes, at most " + std::to_string(largest) + " in one buffer";
  }
};

// A run on its own thread (run_async's), holding the plan's state and the resident operand's
// (null: none), so that either may go before the run does.
template <class T>
std::future<Report> run_later(std::shared_ptr<const PlanState<T>> state,
                              std::shared_ptr<ResidentState<T>> resident, T alpha, const T* a,
                              const T* b, T beta, T* c) {
  return std::async(std::launch::async, [state = std::move(state), resident = std::move(resident),
                                         alpha, a, b, beta, c] {
    Report report;
    state->run(alpha, a, b, beta, c, &report, resident.get());
    return report;
  });
}

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
  state();  // a moved-from plan is refused here, not on the run's thread
  return detail::run_later<T>(state_, nullptr, alpha, a, b, beta, c);
}

namespace detail {

// The resident operand `rs` checked to be `state`'s, for `operand` (at `position` in a run): its
// state, or an Error naming the argument.
template <class T>
ResidentState<T>& resident_of(ResidentState<T>* rs, const PlanState<T>& state, char operand,
                              int position) {
  const std::string where = plan_routine<T>() + ": argument " + std::to_string(position) + " (" +
                            argument_name(operand) + ") ";
  if (rs == nullptr)
    throw Error(Error::Kind::InvalidArgument, where + "is a resident operand moved from", position);
  if (rs->plan.get() != &state)
    throw Error(Error::Kind::InvalidArgument, where + "is a resident operand of another plan",
                position);
  if (rs->operand != operand)
    throw Error(
        Error::Kind::InvalidArgument,
        where + "is a resident " + std::string(1, rs->operand) + ", not " + std::string(1, operand),
        position);
  return *rs;
}

}  // namespace detail

template <class T>
Resident<T> Plan<T>::resident_a(const T* a) const {
  return keep('A', a);
}

template <class T>
Resident<T> Plan<T>::resident_b(const T* b) const {
  return keep('B', b);
}

template <class T>
Resident<T> Plan<T>::keep(char operand, const T* host) const {
  state();
  if (host == nullptr)
    throw Error(
        Error::Kind::InvalidArgument,
        detail::plan_routine<T>() + ": argument 1 (" + detail::argument_name(operand) + ") is NULL",
        1);
  auto rs = std::make_shared<detail::ResidentState<T>>();
  rs->plan = state_;
  rs->host = host;
  rs->operand = operand;
  const detail::Problem<T> p = rs->problem();
  rs->role = p.b == host ? 'B' : 'A';
  rs->keep(1);
  return Resident<T>(std::move(rs));
}

template <class T>
void Plan<T>::run(T alpha, const Resident<T>& a, const T* b, T beta, T* c, Report* report) const {
  auto& rs = detail::resident_of(a.state_.get(), state(), 'A', 2);
  state().run(alpha, rs.host, b, beta, c, report, &rs);
}

template <class T>
void Plan<T>::run(T alpha, const T* a, const Resident<T>& b, T beta, T* c, Report* report) const {
  auto& rs = detail::resident_of(b.state_.get(), state(), 'B', 3);
  state().run(alpha, a, rs.host, beta, c, report, &rs);
}

template <class T>
std::future<Report> Plan<T>::run_async(T alpha, const Resident<T>& a, const T* b, T beta,
                                       T* c) const {
  const auto& rs = detail::resident_of(a.state_.get(), state(), 'A', 2);
  return detail::run_later<T>(state_, a.state_, alpha, rs.host, b, beta, c);
}

template <class T>
std::future<Report> Plan<T>::run_async(T alpha, const T* a, const Resident<T>& b, T beta,
                                       T* c) const {
  const auto& rs = detail::resident_of(b.state_.get(), state(), 'B', 3);
  return detail::run_later<T>(state_, b.state_, alpha, a, rs.host, beta, c);
}

template <class T>
void Resident<T>::update() {
  if (!state_)
    throw Error(Error::Kind::InvalidArgument,
                detail::plan_routine<T>() + ": this resident operand was moved from");
  state_->keep(0);
}

template <class T>
const T* Resident<T>::host() const {
  return state_ ? state_->host : nullptr;
}

template <class T>
char Resident<T>::operand() const {
  return state_ ? state_->operand : '\0';
}

template <class T>
int64_t Resident<T>::device_bytes() const {
  const auto kept = state_ ? state_->current() : nullptr;
  return kept ? kept->bytes() : 0;
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

#define INSTANTIATE(T)    \
  template class Plan<T>; \
  template class Resident<T>;
TANDEM_FOR_EACH_ELEMENT(INSTANTIATE)
#undef INSTANTIATE

}  // namespace tandem
