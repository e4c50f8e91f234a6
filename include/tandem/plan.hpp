// tandem's low-level GEMM (issue 44): a plan made once for a call's shape, run many times.
//
// tandem::gemm plans every call again: it looks up the profile, weighs the devices and divides the
// rows before any work starts. A Plan does that once, when it is made, and builds its devices'
// kernels then (a conjugated complex operand's, a very large shape's 64-bit indexing and the
// plans made at later runs are built at their first run); each run afterwards only moves the
// operands and runs the kernels and the CPU's share, with the same checks of results and the same
// recovery as tandem::gemm (a device that fails leaves its rows to the CPU, with one warning, and
// C is never lost; a device tandem retires after a failure is planned out of the plan's next run).
// Unlike tandem::gemm's calls, a plan's runs are outside auto's watch (a plan is the caller's
// choice, kept as made); profiles read again (a new tune in the process) make its plans again.
//
//   tandem::Plan<float> plan(tandem::Layout::RowMajor, tandem::Op::NoTrans, tandem::Op::NoTrans,
//                            m, n, k, lda, ldb, ldc);
//   for (...) plan.run(1.0f, a, b[i], 0.0f, c[i]);
//   std::future<tandem::Report> done = plan.run_async(1.0f, a, b2, 0.0f, c2);  // no callback
//   ...
//   done.get();  // the Report, or the run's tandem::Error
//
// A plan is made for operands in ordinary memory with beta = 0, as tandem::gemm would plan them;
// a run whose operands lie elsewhere (tandem_malloc memory on a discrete device) or whose beta is
// not 0 uses the plan tandem::gemm would make for those, made on the first such run and kept.
// Plans are immutable once made: runs from several threads, and several runs in flight on one
// plan, are allowed; they share the devices in the order the devices receive them, and each run
// writes only its own C (runs whose C overlap, or whose C overlaps another run's A or B, race).
// A Plan may be copied (the copies share the plan) and may be destroyed while asynchronous runs
// are in flight: they hold what they need. A synchronous run uses the Plan object it was called
// on, which, as any C++ object, must outlive the call (another thread's copy may go meanwhile).
//
// An operand many runs share can be kept on the plan's discrete devices (Resident, below), so
// each run sends only the other operand and C:
//
//   tandem::Resident<float> kept = plan.resident_a(a);   // A crosses the bus once
//   for (...) plan.run(1.0f, kept, b[i], 0.0f, c[i]);
//   ... a changed on the host ...; kept.update();
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <utility>

#include "tandem/tandem.hpp"

namespace tandem {

namespace detail {
template <class T>
struct PlanState;
template <class T>
struct ResidentState;
}  // namespace detail

template <class T>
class Plan;

// A resident operand: one of a plan's operands, A or B, as the caller holds it in host memory,
// with a copy kept on each discrete device of the plan between runs (Plan::resident_a,
// resident_b), so that a run given it sends only the other operand and C. Where every device
// needs all of the operand (op(B) in the row-major view: B of a row-major plan, A of a
// column-major one), each keeps it whole and uses it whole. Where the operand's rows are divided
// among the sides (A of a row-major plan), each device keeps it whole too and computes from its
// band of rows; a band the kernel cannot read there (read transposed, one that does not begin on
// a whole vector of the kernel) is sent as usual. A unified-memory device reads the caller's
// memory in place, as every call does, and keeps nothing. A copy holds device memory and pinned
// host memory of about the operand's size (device_bytes()). The copy is what the host held when
// it was made or last updated: after changing the host copy, call update() before the next run.
// A run between the change and the update computes the devices' rows from the old values and the
// CPU's rows (and those of a unified device, or of a device that fell back) from the new ones: C
// is then a mix, and undefined. The host matrix must stay allocated while the handle, or a run
// given it, lives: runs read it for those rows. A run uses the copies kept when it started; one
// in flight keeps them until it ends, even past an update() or the handle's end. Copies of a
// handle share its copies; the last one's end frees them.
template <class T>
class Resident {
 public:
  using element_type = T;
  // The host copy again to every device that keeps one, waited for: the runs started after it
  // use it. Throws tandem::Error as the plan's resident_a/resident_b do.
  void update();
  // The caller's matrix, as given.
  const T* host() const;
  // 'A' or 'B': which of the plan's operands it stands for.
  char operand() const;
  // Device memory its copies hold, in bytes (0 where no device keeps one).
  int64_t device_bytes() const;

 private:
  friend class Plan<T>;
  explicit Resident(std::shared_ptr<detail::ResidentState<T>> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::ResidentState<T>> state_;
};

template <class T>
class Plan {
 public:
  using element_type = T;
  // Checks the shape as tandem::gemm checks its arguments (an Error naming the argument, at its
  // position here: layout 1 ... ldc 9), plans the call, and builds the kernels its devices will
  // run.
  Plan(Layout layout, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
       int64_t ldc, const Options& options = {});

  // C = alpha op(A) op(B) + beta C for this plan's shape: tandem::gemm's semantics (beta = 0 never
  // reads C; alpha = 0 or k = 0 never reads A or B), its checks of a, b and c (NULL is refused,
  // naming the argument at its position here: a 2, b 3, c 5; C untouched), and its report.
  void run(T alpha, const T* a, const T* b, T beta, T* c, Report* report = nullptr) const;

  // The same, started on its own thread; the future gives the run's Report, or rethrows its
  // Error. The operands must stay alive, and A and B unchanged, until the future is ready.
  // The future's destructor waits for the run (std::async's): one dropped at once makes the call
  // synchronous.
  [[nodiscard]] std::future<Report> run_async(T alpha, const T* a, const T* b, T beta, T* c) const;

  // A resident operand (Resident, above) for this plan's A (B) at `a` (`b`), its stored matrix as
  // the plan's shape and lda (ldb) describe it: copied to the plan's discrete devices now, in the
  // layout their kernels read. NULL is refused (argument 1). A copy that would not fit beside
  // what the plan's runs and other resident operands need on a device is refused with
  // Error::Kind::TooLarge, naming the bytes, and nothing is kept; a device that fails to take
  // its copy keeps none (one warning), and its runs send the operand as usual.
  Resident<T> resident_a(const T* a) const;
  Resident<T> resident_b(const T* b) const;
  // Runs with a resident operand of this plan in A's (B's) place (argument 2 or 3; a handle of
  // another plan or operand is refused there): as run(), computing from the copies it keeps.
  void run(T alpha, const Resident<T>& a, const T* b, T beta, T* c, Report* report = nullptr) const;
  void run(T alpha, const T* a, const Resident<T>& b, T beta, T* c, Report* report = nullptr) const;
  [[nodiscard]] std::future<Report> run_async(T alpha, const Resident<T>& a, const T* b, T beta,
                                              T* c) const;
  [[nodiscard]] std::future<Report> run_async(T alpha, const T* a, const Resident<T>& b, T beta,
                                              T* c) const;

  int64_t m() const;
  int64_t n() const;
  int64_t k() const;
  // How many plans it keeps: one for each memory and beta its runs have met (at most 16).
  size_t plans_kept() const;

 private:
  Resident<T> keep(char operand, const T* host) const;
  // The shared state; a moved-from plan has none, and is refused with an Error.
  const detail::PlanState<T>& state() const;
  std::shared_ptr<const detail::PlanState<T>> state_;
};

#define TANDEM_PLAN_EXTERN(T)    \
  extern template class Plan<T>; \
  extern template class Resident<T>;
TANDEM_PLAN_EXTERN(float)
TANDEM_PLAN_EXTERN(double)
TANDEM_PLAN_EXTERN(std::complex<float>)
TANDEM_PLAN_EXTERN(std::complex<double>)
#undef TANDEM_PLAN_EXTERN

}  // namespace tandem
