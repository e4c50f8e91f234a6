// The co-tuner. Phase 1 (here) searches the kernel space for the fastest GPU-only call at one
// size, with the chosen strategy under the evaluation and time budgets; every run gets a cheap
// check on inputs whose result is known exactly, and every new best a full check on random
// inputs against the CPU BLAS (cotuner_checks.hpp). Phase 2 (cotuner_split.cpp) takes the best
// kernels and, at each size bucket, searches the split p_g/P (nearly unimodal in p_g) and the CPU
// thread count. Both phases append to a JSON-lines log and reuse what it already holds, so an
// interrupted run resumes.
#include "cotuner.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "base/files.hpp"
#include "base/log.hpp"
#include "base/precision.hpp"
#include "base/text.hpp"
#include "cotuner_internal.hpp"
#include "cpu/tasks.hpp"
#include "gemm_space.hpp"
#include "gpu/engine.hpp"
#include "plan/device_profile.hpp"
#include "profile/defaults.hpp"
#include "profile/store.hpp"
#include "profile/tune_log.hpp"

namespace tandem::tuner {
namespace {

// Whether the run's end will be able to keep what it found, known before any of the budget is
// spent. Without a profile directory the profile is kept in memory (prof::save_local).
void check_writable(const std::filesystem::path& file) {
  if (file.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  if (const std::string why = detail::files::unwritable(file); !why.empty())
    throw std::runtime_error("cannot write the profile " + file.string() + ": " + why);
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace

Tuner::Tuner(const TuneOptions& o) : o_(o), given_(o) {
  if (o_.parts < 2) throw std::invalid_argument("the split needs at least 2 parts");
  if (o_.split_max < 0) o_.split_max = o_.parts;
  if (o_.split_min < 0 || o_.split_min > o_.split_max || o_.split_max > o_.parts)
    throw std::invalid_argument("the split's range must lie within 0 to P, in order");
  for (int64_t s : o_.sizes)
    if (s <= 0) throw std::invalid_argument("sizes must be positive");
  std::sort(given_.sizes.begin(), given_.sizes.end());
  if (o_.direct_evaluations <= 0) o_.direct_evaluations = std::max(1, o_.budget_evaluations / 2);
  for (int64_t s : o_.direct_sizes)
    if (s <= 0) throw std::invalid_argument("direct sizes must be positive");
  const int64_t least_batch = prof::batch_tune().sizes.front();
  for (int64_t s : o_.batch_sizes)
    if (s < least_batch)
      throw std::invalid_argument("batch sizes must be at least " + std::to_string(least_batch) +
                                  " (database/defaults.json's batch.tune_sizes: auto deals no "
                                  "smaller product)");
  if (!(o_.batch_call_seconds >= 0))
    throw std::invalid_argument("the batch call time must not be negative");
  device_ = detail::gpu::open_device(o_.device);
  info_ = detail::gpu::info(*device_);
  if (o_.compile_jobs < 0) o_.compile_jobs = info_.is_gpu ? 3 : 0;
  if (o_.small_evaluations < 0) o_.small_evaluations = info_.is_gpu ? o_.budget_evaluations : 0;
  if (o_.objective != "time" && o_.objective != "energy" && o_.objective != "edp")
    throw std::invalid_argument("objective must be time, energy or edp, not '" + o_.objective +
                                "'");
  if (o_.objective != "time") {
    meter_ = std::make_unique<power::Meter>(o_.power_config);
    if (!meter_->any()) {
      std::string why;
      for (const auto& s : meter_->sources())
        why += (why.empty() ? "" : "; ") + s.name + ": " + s.detail;
      throw std::invalid_argument("--objective " + o_.objective +
                                  " needs a readable power source (" + why + ")");
    }
  }
  report_.profile.identity = prof::identity_for(info_);
  report_.profile.tandem_version = TANDEM_VERSION;
  // Beside the profile, where there is a profile directory; without one, and without --log, none.
  const std::filesystem::path dir = prof::directory();
  report_.log = !o_.log.empty() ? o_.log
                : dir.empty()   ? std::filesystem::path()
                                : dir / ("tune-" + report_.profile.identity.file_name() + "l");
  if (o_.save) check_writable(prof::path_for(report_.profile.identity));
  read_log();
}

// A double-precision type on a device without fp64 has nothing to tune: it stays on the CPU.
bool Tuner::tunable(Precision prec) const { return !(detail::needs_fp64(prec) && !info_.fp64); }

// A run of one phase starts from the profile that applies now: its sections for the precisions
// this run tunes (a built-in entry's based on it), and a local profile's tuning record. A built-in
// entry's record is of a tune on another machine, so the run records itself instead as it ends.
void Tuner::start_from(const prof::Profile& active) {
  for (const Precision prec : o_.precisions)
    if (auto it = active.precisions.find(prec); it != active.precisions.end() && tunable(prec))
      report_.profile.precisions.emplace(prec, prof::based_on_its_entry(it->second));
  if (active.origin.rfind("built-in:", 0) != 0) report_.profile.tuning = active.tuning;
}

// This run's tuning record: `strategy` (a run of one phase: its name), the date, its time and
// budgets, and the candidates the profile rests on (the GEMM kernel's, those an earlier run
// measured included, the small tiles', the matrix-engine codelet's, the direct and coalesced).
prof::Tuning Tuner::record(const std::string& strategy) const {
  prof::Tuning t{strategy, o_.objective,      today(),  o_.budget_evaluations,
                 0,        o_.budget_seconds, elapsed()};
  for (const auto& p : report_.precisions)
    t.evaluations += p.evaluations + p.resumed + p.small_evaluations + p.engine_evaluations +
                     p.direct_evaluations + p.coalesced_evaluations;
  return t;
}

// The phase for the kernels, buckets and rules of the profile that applies to this device now
// (none: a profile with what the phase finds alone), saved as a local profile. The local file
// gets the precisions this run tunes; the others stay where they were (save keeps the local
// file's, and the built-in entry goes on serving the rest).
template <class Phase>
TuneReport Tuner::run_alone(const char* name, const Phase& phase) {
  if (const auto active = prof::active_for(info_)) start_from(*active);
  for (size_t i = 0; i < o_.precisions.size(); ++i) {
    const Precision prec = o_.precisions[i];
    if (!tunable(prec)) continue;
    settle(prec);
    precision_deadline_ =
        elapsed() + (o_.budget_seconds - elapsed()) / double(o_.precisions.size() - i);
    PrecisionSummary summary;
    summary.precision = prec;
    prof::PrecisionProfile& pp = report_.profile.precisions[prec];
    const prof::PrecisionProfile before = pp;
    detail::with_element_type(prec, [&](auto zero) { phase(zero, prec, pp, summary); });
    prof::add_measured(before, pp);
    report_.precisions.push_back(summary);
  }
  if (report_.profile.tuning.date.empty()) report_.profile.tuning = record(name);
  report_.seconds = elapsed();
  if (o_.save) save();
  return report_;
}

TuneReport Tuner::run() {
  if (o_.model_only) return run_model_only();
  if (o_.direct_only)
    return run_alone("direct-only", [this](auto zero, Precision prec, auto& pp, auto& summary) {
      tune_direct<decltype(zero)>(prec, pp, summary);
    });
  if (o_.batch_only)
    return run_alone("batch-only", [this](auto zero, Precision prec, auto& pp, auto& summary) {
      tune_batch<decltype(zero)>(prec, pp, summary);
    });
  for (size_t i = 0; i < o_.precisions.size(); ++i) {
    const Precision prec = o_.precisions[i];
    if (!tunable(prec)) continue;
    settle(prec);
    // Each precision gets its share of what is left of the time budget.
    precision_deadline_ =
        elapsed() + (o_.budget_seconds - elapsed()) / double(o_.precisions.size() - i);
    detail::with_element_type(prec, [&](auto zero) { tune_precision<decltype(zero)>(prec); });
  }
  report_.profile.tuning = record(o_.strategy);
  report_.seconds = elapsed();
  if (o_.save) save();
  return report_;
}

// One precision's sizes and start point: as given, else from the profile that applies to this
// device now (its rate sets the sizes, its kernel is the start), else from the defaults.
void Tuner::settle(Precision prec) {
  const auto active = prof::active_for(info_);
  const prof::PrecisionProfile* known = nullptr;
  if (active)
    if (auto it = active->precisions.find(prec);
        it != active->precisions.end() && it->second.gpu_gflops > 0)
      known = &it->second;
  o_.sizes = given_.sizes;
  if (o_.sizes.empty())
    o_.sizes = bucket_sizes(known ? known->gpu_gflops : prof::launch_bound().assumed_gflops,
                            info_.global_mem_bytes, detail::element_bytes(prec));
  o_.kernel_size = given_.kernel_size > 0 ? given_.kernel_size : o_.sizes[o_.sizes.size() / 2];
  // The direct kernel is for small calls: it is searched at twice the smallest bucket size of
  // the rule (or at the kernel size, if smaller), and met against the profile's own kernels from
  // that smallest size up, doubling, to four times the largest bucket.
  const int64_t smallest = prof::tune_sizes().min_size;
  o_.direct_size =
      given_.direct_size > 0 ? given_.direct_size : std::min(o_.kernel_size, 2 * smallest);
  o_.direct_sizes = given_.direct_sizes;
  if (o_.direct_sizes.empty())
    for (int64_t n = std::min(smallest, o_.sizes.front()); n <= 4 * o_.sizes.back(); n *= 2)
      o_.direct_sizes.push_back(n);
  start_ = prec == Precision::d && !given_.start_d.empty() ? given_.start_d : given_.start;
  if (start_.empty() && known) start_ = known->gpu_kernel;
}

std::vector<int64_t> bucket_sizes(double gflops, uint64_t memory_bytes, size_t element_bytes) {
  const prof::TuneSizes& rule = prof::tune_sizes();
  const auto fits = [&](int64_t n) {  // A, B and C in a quarter of the device's memory
    return memory_bytes == 0 ||
           3.0 * double(n) * double(n) * double(element_bytes) <= double(memory_bytes) / 4;
  };
  int64_t top = rule.min_size;
  while (top < rule.max_size && fits(2 * top) &&
         2.0 * double(top) * double(top) * double(top) < rule.call_seconds * gflops * 1e9)
    top *= 2;
  std::vector<int64_t> sizes;
  for (int64_t n = top; n >= rule.min_size && int(sizes.size()) < rule.buckets; n /= 2)
    sizes.insert(sizes.begin(), n);
  return sizes;
}

// The model alone, for the kernels and buckets of the profile that applies to this device now.
TuneReport Tuner::run_model_only() {
  const auto active = prof::active_for(info_);
  if (!active)
    throw std::invalid_argument("fitting the cost model alone needs a profile for " +
                                info_.describe() + ": run `tandem tune` first");
  start_from(*active);
  for (Precision prec : o_.precisions) {
    auto it = report_.profile.precisions.find(prec);
    if (it == report_.profile.precisions.end()) continue;
    PrecisionSummary summary;
    summary.precision = prec;
    settle(prec);
    // At the middle bucket, as a tuning run measures at its middle size.
    const auto& buckets = it->second.buckets;
    const int64_t size = buckets.empty() ? o_.kernel_size : buckets[buckets.size() / 2].size;
    const prof::PrecisionProfile before = it->second;
    summary.model_failure = detail::with_element_type(
        prec, [&](auto zero) { return fit_model<decltype(zero)>(prec, size, it->second); });
    prof::add_measured(before, it->second);
    report_.precisions.push_back(summary);
  }
  if (report_.profile.tuning.date.empty()) report_.profile.tuning = record("model-only");
  report_.seconds = elapsed();
  if (o_.save) save();
  return report_;
}

void Tuner::save() {
  // A fit outside what any machine measures is not stored: every later read would refuse the
  // whole profile for it.
  for (const auto& [prec, why] : prof::drop_models_out_of_range(report_.profile))
    for (PrecisionSummary& s : report_.precisions)
      if (s.precision == prec) s.model_failure = "the fit is outside physical ranges: " + why;
  // Precisions this run did not tune keep what the saved profile had for them.
  report_.saved = prof::save_local_over(report_.profile, o_.precisions);
  report_.profile.origin =
      report_.saved.empty() ? "memory (no profile directory)" : report_.saved.string();
  prof::forget();
}

void Tuner::progress(const std::string& phase, Precision prec, int done, int budget,
                     double best_seconds, int64_t size, const std::string& last, bool keep_line) {
  if (!o_.on_progress) return;
  Progress p;
  p.phase = phase;
  p.precision = prec;
  p.done = done;
  p.budget = budget;
  p.best_gflops = best_seconds > 0 ? gflop(prec, size) / best_seconds : 0;
  p.elapsed = elapsed();
  p.remaining = done > 0
                    ? std::min(o_.budget_seconds - p.elapsed, p.elapsed / done * (budget - done))
                    : o_.budget_seconds - p.elapsed;
  p.last = last;
  p.keep_line = keep_line;
  o_.on_progress(p);
}

template <class T>
std::string Tuner::call_once(Workspace<T>& ws, const Options& opt, double* seconds,
                             double* kernel_seconds) {
  std::fill(ws.c.begin(), ws.c.end(), detail::quiet_nan<T>());
  Report r;
  try {
    const detail::clock::Stopwatch call;
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, ws.n, ws.n, ws.n, T(1), ws.a.data(), ws.n,
            ws.b.data(), ws.n, T(0), ws.c.data(), ws.n, opt, &r);
    *seconds = call.seconds();
  } catch (const Error& e) {
    return e.what();
  }
  if (r.fell_back) return "GPU failed: " + r.fallback_reason;
  if (o_.tamper && r.gpu_rows > 0)
    o_.tamper(ws.c.data(), ws.n * ws.n, detail::precision_of<T>(), r.cpu_rows > 0);
  if (*seconds > o_.timeout_seconds)
    return "timeout: one call took " + std::to_string(*seconds) + " s";
  if (kernel_seconds != nullptr) *kernel_seconds = r.gpu_kernel_seconds;
  return ws.cheap_check();
}

template <class T>
Timed Tuner::time(Workspace<T>& ws, const Options& opt) {
  Timed t;
  std::vector<double> wall, kernel;
  for (int i = 0; i < o_.warmup + o_.reps; ++i) {
    double s = 0, k = 0;
    t.failure = call_once(ws, opt, &s, &k);
    if (!t.failure.empty()) return t;
    if (i >= o_.warmup) {
      wall.push_back(s);
      kernel.push_back(k);
    }
  }
  t.wall = summarize(wall);
  t.kernel = summarize(kernel).median;
  t.cost = t.wall.median;
  if (meter_) {
    // Energy over its own window, long enough for coarse counters.
    EnergyWindow e;
    try {
      e = energy_window(*meter_, o_.reps, o_.energy_seconds, [&] {
        gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, ws.n, ws.n, ws.n, T(1), ws.a.data(),
                ws.n, ws.b.data(), ws.n, T(0), ws.c.data(), ws.n, opt);
      });
    } catch (const Error& err) {
      t.failure = err.what();
      return t;
    }
    t.joules = e.energy.joules / e.calls;
    t.cost = o_.objective == "energy" ? t.joules : t.joules * t.wall.median;
  }
  return t;
}

// Phase 2 (cotuner_split.cpp) times its configurations here too.
#define X(T)                                                    \
  template Timed Tuner::time<T>(Workspace<T>&, const Options&); \
  template std::string Tuner::call_once<T>(Workspace<T>&, const Options&, double*, double*);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

namespace {

template <class T>
std::string build_key(const std::map<std::string, int>& k) {
  return detail::letter(detail::precision_of<T>()) + (" " + detail::text::describe(k));
}

}  // namespace

// Builds p's program and, on a GPU, those of its likely successors, in parallel.
template <class T>
void Tuner::prebuild(const Space& space, const Point& p) {
  std::vector<std::map<std::string, int>> batch{kernel_params(space, p)};
  if (o_.compile_jobs > 0) {
    for (size_t i = 0; i < p.size() && static_cast<int>(batch.size()) <= o_.compile_jobs; ++i)
      for (int d : {-1, 1}) {
        Point q = p;
        q[i] += d;
        if (q[i] < 0 || q[i] >= static_cast<int>(space.parameters[i].values.size()) ||
            space.violated(q))
          continue;
        const auto k = kernel_params(space, q);
        if (!built_.count(build_key<T>(k)) && static_cast<int>(batch.size()) <= o_.compile_jobs)
          batch.push_back(k);
      }
  }
  std::vector<std::map<std::string, int>> to_build;
  for (auto& k : batch)
    if (built_.insert(build_key<T>(k)).second) to_build.push_back(k);
  if (to_build.empty()) return;
  detail::tasks::in_arena(static_cast<int>(to_build.size()), [&] {
    detail::tasks::parallel_for(static_cast<int64_t>(to_build.size()), [&](int64_t i) {
      try {
        constexpr Precision precision = detail::precision_of<T>();
        const auto params = detail::gpu::resolve_params(*device_, precision, to_build[i]);
        detail::gpu::prebuild(*device_, precision, false, false, params);
      } catch (const Error&) {
        // Remembered by the program cache; the measurement reports it.
      }
    });
  });
}

Options Tuner::gpu_options(const std::map<std::string, int>& kernel) const {
  Options opt;
  opt.strategy = Strategy::Gpu;
  opt.device = o_.device;
  opt.kernel_params = kernel;
  return opt;
}

// Whether kernels are ranked as one launch and the discrete pipeline's host-side parameters
// (CHUNK_FILL, QUEUES) are searched per bucket: on a discrete GPU, minimising time.
bool Tuner::discrete_time() const {
  return detail::gpu::is_discrete(*device_) && o_.objective == "time";
}

// The kernel as phase 1 measures it: on a discrete GPU as one launch over operands already
// copied (CHUNK_FILL=64), so candidates are compared on the kernel alone. Chunked, a large tile
// ran at 24k GFLOPS where one launch ran 43k at sgemm 4096 on the H100 host: chunks of one or
// two waves each end in a tail (docs/PERFORMANCE.md). Phase 2 then picks the chunking.
std::map<std::string, int> Tuner::ranked_as(std::map<std::string, int> kernel) const {
  if (discrete_time()) kernel["CHUNK_FILL"] = 64;
  return kernel;
}

template <class T>
void Tuner::tune_precision(Precision prec) {
  PrecisionSummary summary;
  summary.precision = prec;
  DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                      info_.nv_compiler_options};
  // What the device's probe proved of the PTX paths: asynchronous copies join the generic
  // kernels' space; the matrix engine gets its own below.
  const int proved = o_.small_space ? 0 : detail::gpu::engine_verdict(*device_).shapes;
  limits.engine = proved & detail::gpu::kAsyncCopy;
  const auto defaults = detail::gpu::resolve_params(*device_, prec, start_);
  const Space space =
      o_.small_space ? small_gemm_space(limits, prec) : gemm_space(limits, prec, defaults);
  // The direct kernel's search and then the batch rule come last, on time set aside for them
  // now.
  const double end = precision_deadline_;
  if (o_.batch)
    precision_deadline_ -= std::min(o_.batch_seconds, (precision_deadline_ - elapsed()) / 4);
  const double direct_end = precision_deadline_;
  if (o_.direct)
    precision_deadline_ -= std::min(o_.direct_seconds, (precision_deadline_ - elapsed()) / 4);

  // Phase 1: kernels, GPU alone, at the kernel size. It may take two thirds of this precision's
  // share; the split search the rest. The start point is measured whatever the clock says.
  // Where the device's probe proved the matrix engine (double precision, real or complex), its
  // codelet's space takes half of phase 1, and both families' candidates are ranked together.
  const int shapes =
      detail::gpu::engine_shape(8) | detail::gpu::engine_shape(16) | detail::gpu::kEngineEmulated;
  limits.engine = (prec == Precision::d || prec == Precision::z) ? proved & shapes : 0;
  const double phase1 = std::max(1e-3, (precision_deadline_ - elapsed()) * 2.0 / 3.0);
  Candidates measured = rank_kernels<T>(
      prec, space, summary,
      {"kernel", o_.kernel_size, o_.budget_evaluations, limits.engine != 0 ? phase1 / 2 : phase1});
  if (limits.engine != 0)
    rank_engine<T>(prec, limits, precision_deadline_ - elapsed() - phase1 / 2, summary, measured);
  prof::PrecisionProfile pp;
  if (!measured.empty()) {
    pp.gpu_kernel = std::get<2>(measured.front());
    pp.gpu_size = o_.kernel_size;
    pp.gpu_gflops = gflop(prec, o_.kernel_size) / std::get<1>(measured.front());
    summary.best_gpu_gflops = pp.gpu_gflops;
  }
  std::vector<std::map<std::string, int>> top;
  for (const auto& [c, secs, k] : measured)
    if (static_cast<int>(top.size()) < o_.top_kernels &&
        std::find(top.begin(), top.end(), k) == top.end())
      top.push_back(k);

  // Phase 2: the split, per size bucket, for each of the best kernels and a small bucket's own
  // (cotuner_small.cpp).
  bucket_index_ = 0;
  // The small-tile searches (cotuner_small.cpp) share at most a third of what is left, so the
  // buckets' splits keep the rest.
  std::vector<bool> small(o_.sizes.size());
  for (size_t i = 0; i < o_.sizes.size(); ++i)
    small[i] = !top.empty() && wants_small_tiles<T>(o_.sizes[i], top.front());
  int small_buckets = static_cast<int>(std::count(small.begin(), small.end(), true));
  small_until_ = elapsed() + std::min(o_.small_seconds, (precision_deadline_ - elapsed()) / 3.0);
  for (size_t i = 0; i < o_.sizes.size(); ++i) {
    const int64_t size = o_.sizes[i];
    if (out_of_time() && !pp.buckets.empty()) break;
    // A small bucket's own kernel goes first: the split search stops taking kernels when time
    // runs out.
    std::vector<std::map<std::string, int>> candidates;
    if (small[i]) candidates = small_tiles<T>(prec, size, small_buckets--, summary);
    for (const auto& k : top)
      if (std::find(candidates.begin(), candidates.end(), k) == candidates.end())
        candidates.push_back(k);
    pp.buckets.push_back(split_bucket<T>(prec, size, candidates));
    ++bucket_index_;
  }
  // The cost model, for the shapes the buckets did not measure.
  if (o_.model) summary.model_failure = fit_model<T>(prec, o_.kernel_size, pp);
  precision_deadline_ = direct_end;
  if (o_.direct) tune_direct<T>(prec, pp, summary);
  precision_deadline_ = end;
  if (o_.batch) tune_batch<T>(prec, pp, summary);
  report_.profile.precisions[prec] = pp;
  report_.precisions.push_back(summary);
}

template <class T>
void Tuner::rank_engine(Precision prec, const DeviceLimits& limits, double seconds,
                        PrecisionSummary& summary, Candidates& measured) {
  PrecisionSummary search;
  search.precision = prec;
  const Space engine = engine_space(limits, prec, detail::gpu::engine_params(info_.is_gpu));
  const Candidates more =
      rank_kernels<T>(prec, engine, search,
                      {"engine", o_.kernel_size, o_.budget_evaluations, std::max(1e-3, seconds)});
  summary.engine_evaluations = search.evaluations + search.resumed;
  for (const std::string& why : search.failure_reasons)
    if (summary.failure_reasons.size() < 12) summary.failure_reasons.push_back("engine " + why);
  measured.insert(measured.end(), more.begin(), more.end());
  std::sort(measured.begin(), measured.end(),
            [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
}

// Phase 1 (and the direct kernel's search): every kernel candidate that passed, fastest first.
template <class T>
Candidates Tuner::rank_kernels(Precision prec, const Space& space, PrecisionSummary& summary,
                               const SearchPlan& plan) {
  KernelSearch<T> ks{plan.kind, prec, space, Workspace<T>(plan.size), summary};
  const std::string phase = std::string(plan.kind) == "kernel" ? "kernels" : plan.kind;
  Evaluator ev(
      space, [&](const Point& p) { return try_kernel(ks, p); },
      Budget{plan.evaluations, plan.seconds},
      [&](const Point& p, const Outcome& out, const Evaluator& e) {
        progress(phase, prec, e.evaluations(), plan.evaluations, ks.best, ks.ws.n,
                 space.describe(p) + (out.cost ? "" : "  [" + out.failure.substr(0, 80) + "]"));
      });
  resume_kernels(ks, ev);
  search(o_.strategy, ev, o_.seed);
  summary.evaluations = ev.evaluations();
  std::sort(ks.measured.begin(), ks.measured.end(),
            [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
  return ks.measured;
}

// The search's objective: one candidate kernel, timed, checked and logged.
template <class T>
Outcome Tuner::try_kernel(KernelSearch<T>& ks, const Point& p) {
  const auto kernel = kernel_params(ks.space, p);
  prebuild<T>(ks.space, p);
  Timed t = time(ks.ws, gpu_options(ranked_as(kernel)));
  // On a discrete GPU the candidates differ in the kernel, not in the copies (the same for all,
  // and overlapped with the kernel): rank them by the kernel's own time.
  if (t.failure.empty() && !info_.unified_memory && o_.objective == "time" && t.kernel > 0)
    t.cost = t.kernel;
  const bool new_best = t.failure.empty() && (ks.best == 0 || t.cost < ks.best);
  if (new_best) {
    const std::string bad = full_check<T>(std::min<int64_t>(ks.ws.n, 512), gpu_options(kernel),
                                          o_.seed + ks.measured.size(), o_.tamper);
    if (!bad.empty()) t.failure = bad;
  }
  prof::LogRecord rec = record(ks.kind, ks.precision, ks.ws.n, ranked_as(kernel), t);
  rec.point = p;
  if (t.failure.empty()) {
    ks.measured.emplace_back(t.cost, t.wall.median, kernel);
    if (new_best) ks.best = t.cost;
  } else {
    ++ks.summary.failures;
    if (ks.summary.failure_reasons.size() < 8)
      ks.summary.failure_reasons.push_back(detail::text::describe(kernel) + ": " +
                                           t.failure.substr(0, 300));
  }
  append(rec);
  return t.failure.empty() ? Outcome{t.cost, ""} : Outcome{std::nullopt, t.failure};
}

// What an earlier, interrupted run measured is not measured again.
template <class T>
void Tuner::resume_kernels(KernelSearch<T>& ks, Evaluator& ev) {
  for (const auto& r : log_)
    if (r.kind == ks.kind && r.precision == ks.precision && r.size == ks.ws.n &&
        r.point.size() == ks.space.dimension() && !ks.space.violated(r.point) &&
        ranked_as(kernel_params(ks.space, r.point)) == r.kernel) {
      const std::optional<double> cost = r.seconds ? std::optional<double>(r.cost) : std::nullopt;
      ev.preload(r.point, Outcome{cost, r.failure});
      if (cost) {
        ks.measured.emplace_back(*cost, *r.seconds, kernel_params(ks.space, r.point));
        if (ks.best == 0 || *cost < ks.best) ks.best = *cost;
      }
      ++ks.summary.resumed;
    }
}

// The direct kernel's search (cotuner_direct.cpp) ranks its candidates here too.
#define X(T)                                                                             \
  template Candidates Tuner::rank_kernels<T>(Precision, const Space&, PrecisionSummary&, \
                                             const SearchPlan&);
TANDEM_FOR_EACH_ELEMENT(X)
#undef X

TuneReport tune(const TuneOptions& options) { return Tuner(options).run(); }

}  // namespace tandem::tuner
