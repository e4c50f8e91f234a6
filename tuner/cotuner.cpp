// The co-tuner. Phase 1 searches the kernel space for the fastest GPU-only call at one size, with
// the chosen strategy under the evaluation and time budgets; every run gets a cheap check on
// inputs whose result is known exactly, and every new best a full check on random inputs
// against the CPU BLAS. Phase 2 takes the best kernels and, at each size bucket, searches the
// split p_g/P (nearly unimodal in p_g) and the CPU thread count. Both phases append to a
// JSON-lines log and reuse what it already holds, so an interrupted run resumes.
#include "cotuner.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "gemm_measure.hpp"
#include "gemm_space.hpp"
#include "gpu.hpp"
#include "measure.hpp"
#include "search.hpp"
#include "tandem/tandem.hpp"
#include "clock.hpp"
#include "cpu_blas.hpp"
#include "tasks.hpp"
#include "text.hpp"
#include "topology.hpp"

namespace tandem::tuner {
namespace {

namespace prof = detail::profile;
namespace clock = detail::clock;

// The work of one square call of size s.
double gflop(int64_t s) { return bench::gflop(s, s, s); }

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Square problems in ordinary host memory, or in tandem_malloc memory (`resident`), with inputs
// whose product is known exactly (small integers: every partial sum is an integer that float
// represents exactly) for the cheap check.
template <class T>
struct Workspace {
  int64_t n = 0;
  bool resident = false;
  std::vector<T, bench::HostAllocator<T>> a, b, c;
  explicit Workspace(int64_t size, bool in_tandem_memory = false)
      : n(size),
        resident(in_tandem_memory),
        a(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        b(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)),
        c(size * size, T(0), bench::HostAllocator<T>(in_tandem_memory)) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < n; ++p) {
        a[i * n + p] = static_cast<T>((i * 7 + p * 3) % 5 - 2);
        b[i * n + p] = static_cast<T>((i * 5 + p * 11) % 7 - 3);
      }
  }
  double exact(int64_t i, int64_t j) const {
    double s = 0;
    for (int64_t p = 0; p < n; ++p) s += double(a[i * n + p]) * double(b[p * n + j]);
    return s;
  }
  // The corners, the middle and a seeded sample: a wrong tile, fringe or index shows here.
  std::string cheap_check() const {
    std::vector<std::pair<int64_t, int64_t>> at{{0, 0}, {0, n - 1}, {n - 1, 0}, {n - 1, n - 1}, {n / 2, n / 2}};
    std::mt19937_64 rng(static_cast<uint64_t>(n));
    for (int s = 0; s < 27; ++s)
      at.emplace_back(std::uniform_int_distribution<int64_t>(0, n - 1)(rng),
                      std::uniform_int_distribution<int64_t>(0, n - 1)(rng));
    for (auto [i, j] : at) {
      const double want = exact(i, j), got = double(c[i * n + j]);
      if (got != want) {
        std::ostringstream msg;
        msg << "cheap check: C(" << i << "," << j << ") = " << got << ", expected " << want;
        return msg.str();
      }
    }
    return "";
  }
};

// Random inputs, the whole of C against the CPU BLAS in double.
// A GPU that fails here, or falls back to the CPU (whose result would pass), fails the check.
template <class T>
std::string full_check(int64_t n, const Options& o, uint64_t seed,
                       const std::function<void(void*, int64_t, bool, bool)>& tamper) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<T> a(n * n), b(n * n), c(n * n, std::numeric_limits<T>::quiet_NaN());
  for (auto& x : a) x = static_cast<T>(d(rng));
  for (auto& x : b) x = static_cast<T>(d(rng));
  Report r;
  try {
    gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, T(1), a.data(), n, b.data(), n, T(0),
            c.data(), n, o, &r);
  } catch (const Error& e) {
    return std::string("full check: ") + e.what();
  }
  if (r.fell_back) return "full check: GPU failed: " + r.fallback_reason;
  if (tamper && r.gpu_rows > 0) tamper(c.data(), n * n, std::is_same_v<T, double>, r.cpu_rows > 0);
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), ref(n * n);
  Options cpu;
  cpu.strategy = Strategy::Cpu;
  gemm<double>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, n, n, n, 1.0, ad.data(), n, bd.data(), n,
               0.0, ref.data(), n, cpu);
  // |a|, |b| <= 1: every element's rounding error is below k * eps (with room for the order).
  const double tol = 4.0 * double(n + 2) * std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < n * n; ++i) {
    const double err = std::fabs(double(c[i]) - ref[i]);
    if (!(err <= tol * std::max(1.0, std::sqrt(double(n))))) {
      std::ostringstream msg;
      msg << "full check: C(" << i / n << "," << i % n << ") = " << c[i] << ", expected " << ref[i];
      return msg.str();
    }
  }
  return "";
}

struct Timed {
  Stats wall;
  double kernel = 0;  // median kernel time from profiling events
  double joules = 0;  // per call, when the objective reads energy
  double cost = 0;    // what the search minimises: seconds, joules or joule-seconds
  std::string failure;
};

// A log record of `kind` for one timing of `kernel` at `size`.
prof::LogRecord record(const char* kind, char precision, int64_t size, const std::map<std::string, int>& kernel,
                       const Timed& t) {
  prof::LogRecord rec;
  rec.kind = kind;
  rec.precision = precision;
  rec.size = size;
  rec.kernel = kernel;
  rec.failure = t.failure;
  if (!t.failure.empty()) return rec;
  rec.seconds = t.wall.median;
  rec.cost = t.cost;
  rec.min = t.wall.min;
  rec.max = t.wall.max;
  rec.spread = t.wall.spread;
  rec.bimodal = t.wall.bimodal;
  rec.kernel_seconds = t.kernel;
  return rec;
}

class Tuner {
 public:
  explicit Tuner(const TuneOptions& o) : o_(o) {
    if (o_.sizes.empty()) throw std::invalid_argument("no sizes to tune at");
    if (o_.parts < 2) throw std::invalid_argument("the split needs at least 2 parts");
    for (int64_t s : o_.sizes)
      if (s <= 0) throw std::invalid_argument("sizes must be positive");
    std::sort(o_.sizes.begin(), o_.sizes.end());
    if (o_.kernel_size <= 0) o_.kernel_size = o_.sizes[o_.sizes.size() / 2];
    device_ = detail::gpu::open_device(o_.device);
    info_ = detail::gpu::info(*device_);
    if (o_.compile_jobs < 0) o_.compile_jobs = info_.is_gpu ? 3 : 0;
    if (o_.objective != "time" && o_.objective != "energy" && o_.objective != "edp")
      throw std::invalid_argument("objective must be time, energy or edp, not '" + o_.objective + "'");
    if (o_.objective != "time") {
      meter_ = std::make_unique<power::Meter>(o_.power_config);
      if (!meter_->any()) {
        std::string why;
        for (const auto& s : meter_->sources()) why += (why.empty() ? "" : "; ") + s.name + ": " + s.detail;
        throw std::invalid_argument("--objective " + o_.objective + " needs a readable power source (" + why + ")");
      }
    }
    report_.profile.identity = prof::identity_for(info_);
    report_.profile.tandem_version = TANDEM_VERSION;
    report_.log = o_.log.empty() ? prof::directory() / ("tune-" + report_.profile.identity.file_name() + "l")
                                 : o_.log;
    read_log();
  }

  TuneReport run() {
    for (char prec : o_.precisions)
      if (prec != 's' && prec != 'd') throw std::invalid_argument("precision must be s or d");
    for (size_t i = 0; i < o_.precisions.size(); ++i) {
      const char prec = o_.precisions[i];
      if (prec == 'd' && !info_.fp64) continue;  // nothing to tune: dgemm stays on the CPU
      // Each precision gets its share of what is left of the time budget.
      precision_deadline_ = elapsed() + (o_.budget_seconds - elapsed()) / double(o_.precisions.size() - i);
      if (prec == 's')
        tune_precision<float>('s');
      else
        tune_precision<double>('d');
    }
    prof::Tuning& t = report_.profile.tuning;
    t.strategy = o_.strategy;
    t.objective = o_.objective;
    t.date = today();
    t.budget_evaluations = o_.budget_evaluations;
    t.budget_seconds = o_.budget_seconds;
    t.seconds = elapsed();
    for (const auto& p : report_.precisions) t.evaluations += p.evaluations;
    report_.seconds = elapsed();
    if (o_.save) {
      report_.saved = prof::path_for(report_.profile.identity);
      // Precisions this run did not tune keep what the saved profile had for them (tune s, then
      // d, and both are there).
      std::error_code ec;
      if (std::filesystem::exists(report_.saved, ec)) {
        try {
          const prof::Profile old = prof::load(report_.saved);
          if (prof::compatible(old) && old.identity == report_.profile.identity)
            for (const auto& [prec, pp] : old.precisions)
              if (std::find(o_.precisions.begin(), o_.precisions.end(), prec) == o_.precisions.end())
                report_.profile.precisions.emplace(prec, pp);
        } catch (const std::exception&) {
          // An unreadable old file is simply replaced.
        }
      }
      prof::save(report_.profile, report_.saved);
      report_.profile.origin = report_.saved.string();
      prof::forget();
    }
    return report_;
  }

 private:
  double elapsed() const { return started_.seconds(); }
  bool out_of_time() const { return elapsed() >= precision_deadline_; }

  void read_log() {
    std::ifstream in(report_.log);
    for (std::string line; std::getline(in, line);)
      if (auto r = prof::from_log_line(line)) log_.push_back(*r);
  }

  void append(const prof::LogRecord& r) {
    std::error_code ec;
    std::filesystem::create_directories(report_.log.parent_path(), ec);
    std::ofstream out(report_.log, std::ios::app);
    out << prof::to_log_line(r) << "\n";
    log_.push_back(r);
  }

  const prof::LogRecord* logged_split(char prec, int64_t size, const std::map<std::string, int>& kernel,
                                      int gpu_parts, int threads, bool resident) const {
    for (const auto& r : log_)
      if (r.kind == "split" && r.precision == prec && r.size == size && r.kernel == kernel &&
          r.gpu_parts == gpu_parts && r.parts == o_.parts && r.cpu_threads == threads &&
          r.resident == resident)
        return &r;
    return nullptr;
  }

  void progress(const std::string& phase, char prec, int done, int budget, double best_seconds,
                int64_t size, const std::string& last) {
    if (!o_.on_progress) return;
    Progress p;
    p.phase = phase;
    p.precision = prec;
    p.done = done;
    p.budget = budget;
    p.best_gflops = best_seconds > 0 ? gflop(size) / best_seconds : 0;
    p.elapsed = elapsed();
    p.remaining = done > 0 ? std::min(o_.budget_seconds - p.elapsed, p.elapsed / done * (budget - done))
                           : o_.budget_seconds - p.elapsed;
    p.last = last;
    o_.on_progress(p);
  }

  // Times one configuration on ws (after warm-up), checking each result cheaply.
  template <class T>
  Timed time(Workspace<T>& ws, const Options& opt) {
    Timed t;
    std::vector<double> wall, kernel;
    try {
      for (int i = 0; i < o_.warmup + o_.reps; ++i) {
        std::fill(ws.c.begin(), ws.c.end(), std::numeric_limits<T>::quiet_NaN());
        Report r;
        const clock::Stopwatch call;
        gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, ws.n, ws.n, ws.n, T(1), ws.a.data(), ws.n,
                ws.b.data(), ws.n, T(0), ws.c.data(), ws.n, opt, &r);
        const double s = call.seconds();
        if (r.fell_back) {
          t.failure = "GPU failed: " + r.fallback_reason;
          return t;
        }
        if (o_.tamper && r.gpu_rows > 0)
          o_.tamper(ws.c.data(), ws.n * ws.n, std::is_same_v<T, double>, r.cpu_rows > 0);
        if (s > o_.timeout_seconds) {
          t.failure = "timeout: one call took " + std::to_string(s) + " s";
          return t;
        }
        if (const std::string bad = ws.cheap_check(); !bad.empty()) {
          t.failure = bad;
          return t;
        }
        if (i >= o_.warmup) {
          wall.push_back(s);
          kernel.push_back(r.gpu_kernel_seconds);
        }
      }
    } catch (const Error& e) {
      t.failure = e.what();
      return t;
    }
    t.wall = summarize(wall);
    t.kernel = summarize(kernel).median;
    t.cost = t.wall.median;
    if (meter_) {
      // Energy over its own window, long enough for coarse counters.
      EnergyWindow e;
      try {
        e = energy_window(*meter_, o_.reps, o_.energy_seconds, [&] {
          gemm<T>(Layout::RowMajor, Op::NoTrans, Op::NoTrans, ws.n, ws.n, ws.n, T(1), ws.a.data(), ws.n,
                  ws.b.data(), ws.n, T(0), ws.c.data(), ws.n, opt);
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

  template <class T>
  static std::string build_key(const std::map<std::string, int>& k) {
    return (std::is_same_v<T, double> ? "d " : "s ") + detail::text::describe(k);
  }

  // Builds p's program and, on a GPU, those of its likely successors, in parallel.
  template <class T>
  void prebuild(const Space& space, const Point& p) {
    std::vector<std::map<std::string, int>> batch{kernel_params(space, p)};
    if (o_.compile_jobs > 0) {
      for (size_t i = 0; i < p.size() && static_cast<int>(batch.size()) <= o_.compile_jobs; ++i)
        for (int d : {-1, 1}) {
          Point q = p;
          q[i] += d;
          if (q[i] < 0 || q[i] >= static_cast<int>(space.parameters[i].values.size()) || space.violated(q))
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
    constexpr bool fp64 = std::is_same_v<T, double>;
    detail::tasks::in_arena(static_cast<int>(to_build.size()), [&] {
      detail::tasks::parallel_for(static_cast<int64_t>(to_build.size()), [&](int64_t i) {
        try {
          const auto params = detail::gpu::resolve_params(*device_, fp64, to_build[i]);
          detail::gpu::prebuild(*device_, fp64, false, false, params);
        } catch (const Error&) {
          // Remembered by the program cache; the measurement reports it.
        }
      });
    });
  }

  Options gpu_options(const std::map<std::string, int>& kernel) const {
    Options opt;
    opt.strategy = Strategy::Gpu;
    opt.device = o_.device;
    opt.kernel_params = kernel;
    return opt;
  }

  // Whether kernels are ranked as one launch and the discrete pipeline's host-side parameters
  // (CHUNK_FILL, QUEUES) are searched per bucket: on a discrete GPU, minimising time.
  bool discrete_time() const { return detail::gpu::is_discrete(*device_) && o_.objective == "time"; }

  // The kernel as phase 1 measures it: on a discrete GPU as one launch over operands already
  // copied (CHUNK_FILL=64), so candidates are compared on the kernel alone. Chunked, a large tile
  // ran at 24k GFLOPS where one launch ran 43k at sgemm 4096 on the H100 host: chunks of one or
  // two waves each end in a tail (docs/PERFORMANCE.md). Phase 2 then picks the chunking.
  std::map<std::string, int> ranked_as(std::map<std::string, int> kernel) const {
    if (discrete_time()) kernel["CHUNK_FILL"] = 64;
    return kernel;
  }

  // The discrete pipeline's settings tried for each kernel in phase 2: work-groups per compute
  // unit in a chunk (64: one chunk, no overlap) and kernel queues.
  static std::vector<std::pair<int, int>> pipelines() {
    return {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {4, 1}, {4, 2}, {64, 1}};
  }

  template <class T>
  void tune_precision(char prec) {
    constexpr bool fp64 = std::is_same_v<T, double>;
    PrecisionSummary summary;
    summary.precision = prec;
    DeviceLimits limits{info_.max_work_group, info_.local_mem_bytes, info_.is_gpu,
                        info_.nv_compiler_options};
    const auto defaults =
        detail::gpu::resolve_params(*device_, fp64, fp64 && !o_.start_d.empty() ? o_.start_d : o_.start);
    const Space space = o_.small_space ? small_gemm_space(limits, fp64) : gemm_space(limits, fp64, defaults);

    // Phase 1: kernels, GPU alone, at the kernel size.
    Workspace<T> ws(o_.kernel_size);
    double best = 0;
    // (cost, seconds, kernel) of every candidate that passed.
    std::vector<std::tuple<double, double, std::map<std::string, int>>> measured;
    auto objective = [&](const Point& p) -> Outcome {
      const auto kernel = kernel_params(space, p);
      prebuild<T>(space, p);
      Timed t = time(ws, gpu_options(ranked_as(kernel)));
      // On a discrete GPU the candidates differ in the kernel, not in the copies (the same for
      // all, and overlapped with the kernel): rank them by the kernel's own time.
      if (t.failure.empty() && !info_.unified_memory && o_.objective == "time" && t.kernel > 0)
        t.cost = t.kernel;
      const bool new_best = t.failure.empty() && (best == 0 || t.cost < best);
      if (new_best) {
        const std::string bad = full_check<T>(std::min<int64_t>(ws.n, 512), gpu_options(kernel),
                                              o_.seed + measured.size(), o_.tamper);
        if (!bad.empty()) t.failure = bad;
      }
      prof::LogRecord rec = record("kernel", prec, ws.n, ranked_as(kernel), t);
      rec.point = p;
      if (t.failure.empty()) {
        measured.emplace_back(t.cost, t.wall.median, kernel);
        if (new_best) best = t.cost;
      } else {
        ++summary.failures;
        if (summary.failure_reasons.size() < 8)
          summary.failure_reasons.push_back(detail::text::describe(kernel) + ": " + t.failure.substr(0, 300));
      }
      append(rec);
      return t.failure.empty() ? Outcome{t.cost, ""} : Outcome{std::nullopt, t.failure};
    };
    Evaluator ev(space, objective,
                 // The kernel search may take two thirds of this precision's share; the split
                 // search the rest. The start point is measured whatever the clock says.
                 Budget{o_.budget_evaluations,
                        std::max(1e-3, (precision_deadline_ - elapsed()) * 2.0 / 3.0)},
                 [&](const Point& p, const Outcome& out, const Evaluator& e) {
                   progress("kernels", prec, e.evaluations(), o_.budget_evaluations, best, ws.n,
                            space.describe(p) + (out.cost ? "" : "  [" + out.failure.substr(0, 80) + "]"));
                 });
    // What an earlier, interrupted run measured is not measured again.
    for (const auto& r : log_)
      if (r.kind == "kernel" && r.precision == prec && r.size == ws.n && r.point.size() == space.dimension() &&
          !space.violated(r.point) && ranked_as(kernel_params(space, r.point)) == r.kernel) {
        const std::optional<double> cost = r.seconds ? std::optional<double>(r.cost) : std::nullopt;
        ev.preload(r.point, Outcome{cost, r.failure});
        if (cost) {
          measured.emplace_back(*cost, *r.seconds, kernel_params(space, r.point));
          if (best == 0 || *cost < best) best = *cost;
        }
        ++summary.resumed;
      }
    search(o_.strategy, ev, o_.seed);
    summary.evaluations = ev.evaluations();

    prof::PrecisionProfile pp;
    std::sort(measured.begin(), measured.end(),
              [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
    if (!measured.empty()) {
      pp.gpu_kernel = std::get<2>(measured.front());
      pp.gpu_size = ws.n;
      pp.gpu_gflops = gflop(ws.n) / std::get<1>(measured.front());
      summary.best_gpu_gflops = pp.gpu_gflops;
    }
    std::vector<std::map<std::string, int>> top;
    for (const auto& [c, secs, k] : measured)
      if (static_cast<int>(top.size()) < o_.top_kernels && std::find(top.begin(), top.end(), k) == top.end())
        top.push_back(k);

    // Phase 2: the split, per size bucket, for each of the best kernels.
    bucket_index_ = 0;
    for (int64_t size : o_.sizes) {
      if (out_of_time() && !pp.buckets.empty()) break;
      pp.buckets.push_back(split_bucket<T>(prec, size, top));
      ++bucket_index_;
    }
    report_.profile.precisions[prec] = pp;
    report_.precisions.push_back(summary);
  }

  // One hybrid configuration's cost (what the objective minimises) and wall time, from the log
  // when already measured; infinite if it failed.
  struct Measured {
    double cost = std::numeric_limits<double>::infinity();
    double seconds = std::numeric_limits<double>::infinity();
  };

  template <class T>
  Measured hybrid_time(char prec, Workspace<T>& ws, const std::map<std::string, int>& kernel, int gpu_parts,
                     int threads) {
    if (const auto* r = logged_split(prec, ws.n, kernel, gpu_parts, threads, ws.resident))
      return r->seconds ? Measured{r->cost, *r->seconds} : Measured{};
    if (gpu_parts > 0 && gpu_parts < o_.parts && out_of_time())
      return Measured{};  // the split search stops with the clock
    Options opt;
    opt.device = o_.device;
    // Always explicit, so an active profile's thread count never leaks into the comparison.
    opt.cpu_threads = threads > 0 ? threads : default_threads(gpu_parts);
    if (gpu_parts == 0) {
      opt.strategy = Strategy::Cpu;
    } else if (gpu_parts == o_.parts) {
      opt = gpu_options(kernel);
    } else {
      opt.strategy = Strategy::Hybrid;
      opt.gpu_fraction = double(gpu_parts) / o_.parts;
      opt.kernel_params = kernel;
    }
    Timed t = time(ws, opt);
    prof::LogRecord rec = record("split", prec, ws.n, kernel, t);
    rec.gpu_parts = gpu_parts;
    rec.parts = o_.parts;
    rec.cpu_threads = threads;
    rec.resident = ws.resident;
    append(rec);
    if (t.failure.empty() && (bucket_best_ == 0 || t.wall.median < bucket_best_)) bucket_best_ = t.wall.median;
    progress("split", prec, bucket_index_, static_cast<int>(o_.sizes.size()), bucket_best_, ws.n,
             "size " + std::to_string(ws.n) + (ws.resident ? " resident" : "") + " p_g=" +
                 std::to_string(gpu_parts) + "/" +
                 std::to_string(o_.parts) + (threads ? " threads=" + std::to_string(threads) : "") +
                 (t.failure.empty() ? "" : "  [" + t.failure.substr(0, 80) + "]"));
    return t.failure.empty() ? Measured{t.cost, t.wall.median} : Measured{};
  }

  // The CPU share's threads when the tuner does not vary them: every core alone, one fewer
  // beside a GPU share (the feeder's).
  static int default_threads(int gpu_parts) {
    const int cores = std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
    return gpu_parts > 0 ? std::max(1, cores - 1) : cores;
  }

  // The CPU share's threads while the split is searched: one core fewer than all for the
  // feeder, or half the cores where the feeder packs and unpacks the GPU's operands (a discrete
  // device, ordinary memory), which one core could not keep up with on the H100 host
  // (docs/PERFORMANCE.md). The thread search afterwards tries other counts.
  int search_threads(bool resident) const {
    const int cores = std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
    if (detail::gpu::is_discrete(*device_) && !resident) return std::max(1, cores / 2);
    return default_threads(1);
  }

  // One workspace's best split over the kernels `top`: the CPU alone, each kernel alone, the
  // split p_g/P (nearly unimodal), then at the best split the CPU share's thread count (the
  // cores it leaves feed the GPU on a discrete device) and the split again next to it.
  struct Split {
    Measured best, best_gpu;
    int gpu_parts = 0, cpu_threads = 0;
    std::map<std::string, int> kernel, gpu_kernel;
    double gpu_gflops = 0;
  };

  template <class T>
  Split search_split(char prec, Workspace<T>& ws, const Measured& cpu,
                     const std::vector<std::map<std::string, int>>& top) {
    Split sp;
    sp.best = cpu;
    for (const auto& ranked : top) {
      if (out_of_time()) break;
      // On a discrete GPU, the kernel with the chunking that runs it fastest alone.
      std::map<std::string, int> kernel = ranked;
      Measured gpu;  // no CPU share
      if (!discrete_time())
        gpu = hybrid_time<T>(prec, ws, kernel, o_.parts, 0);
      else
        for (const auto& [fill, queues] : pipelines()) {
          if (out_of_time() && kernel != ranked) break;  // the first is measured whatever the clock
          std::map<std::string, int> k = ranked;
          k["CHUNK_FILL"] = fill;
          k["QUEUES"] = queues;
          const Measured m = hybrid_time<T>(prec, ws, k, o_.parts, 0);
          if (m.cost < gpu.cost || kernel == ranked) {
            gpu = m;
            kernel = k;
          }
        }
      sp.gpu_gflops = std::max(sp.gpu_gflops, std::isfinite(gpu.seconds) ? gflop(ws.n) / gpu.seconds : 0.0);
      if (gpu.cost < sp.best_gpu.cost) {
        sp.best_gpu = gpu;
        sp.gpu_kernel = kernel;  // strategy gpu's kernel at this size
      }
      auto at = [&](int g) {
        return g == 0 ? cpu : g == o_.parts ? gpu : hybrid_time<T>(prec, ws, kernel, g, search_threads(ws.resident));
      };
      const int pg = minimize_unimodal([&](int g) { return at(g).cost; }, 0, o_.parts);
      const Measured t = at(pg);
      if (t.cost < sp.best.cost) {
        sp.best = t;
        sp.gpu_parts = pg;
        sp.kernel = kernel;
      }
    }
    if (sp.gpu_parts > 0 && sp.gpu_parts < o_.parts) {
      sp.cpu_threads = search_threads(ws.resident);
      const int cores = std::min(detail::topology::physical_cores(), detail::cpu_blas::current_threads());
      std::set<int> counts;
      for (int c : {cores, cores - 1, cores - 2, cores - 4, cores / 2, cores / 4})
        if (c >= 1 && c <= cores && c != sp.cpu_threads) counts.insert(c);
      const int split = sp.gpu_parts;
      for (int c : counts) {
        if (out_of_time()) break;
        const Measured m = hybrid_time<T>(prec, ws, sp.kernel, split, c);
        if (m.cost < sp.best.cost) {
          sp.best = m;
          sp.cpu_threads = c;
        }
      }
      for (int g : {split - 2, split - 1, split + 1, split + 2}) {
        if (g <= 0 || g >= o_.parts || out_of_time()) continue;
        const Measured m = hybrid_time<T>(prec, ws, sp.kernel, g, sp.cpu_threads);
        if (m.cost < sp.best.cost) {
          sp.best = m;
          sp.gpu_parts = g;
        }
      }
      // A split must beat the better single strategy by the margin, or that one is kept.
      const int keep = keep_split(cpu.cost, sp.best_gpu.cost, sp.gpu_parts, sp.best.cost, o_.parts, o_.split_margin);
      if (keep != sp.gpu_parts) {
        sp.best = keep == 0 ? cpu : sp.best_gpu;
        sp.gpu_parts = keep;
        sp.kernel = keep == 0 ? std::map<std::string, int>{} : sp.gpu_kernel;
        sp.cpu_threads = 0;
      }
    }
    return sp;
  }

  // The full check of a split's winner (on ordinary memory); false if it failed.
  template <class T>
  bool winner_checks(int64_t size, int gpu_parts, int cpu_threads, const std::map<std::string, int>& kernel,
                     uint64_t seed) {
    Options opt;
    opt.device = o_.device;
    opt.strategy = gpu_parts == o_.parts ? Strategy::Gpu : Strategy::Hybrid;
    opt.gpu_fraction = double(gpu_parts) / o_.parts;
    opt.kernel_params = kernel;
    if (cpu_threads > 0) opt.cpu_threads = cpu_threads;
    return full_check<T>(std::min<int64_t>(size, 512), opt, seed, o_.tamper).empty();
  }

  template <class T>
  prof::Bucket split_bucket(char prec, int64_t size, const std::vector<std::map<std::string, int>>& top) {
    bucket_best_ = 0;
    prof::Bucket b;
    b.size = size;
    b.parts = o_.parts;
    Measured cpu, best;
    {
      Workspace<T> ws(size);
      cpu = hybrid_time<T>(prec, ws, {}, 0, default_threads(0));
      b.cpu_gflops = std::isfinite(cpu.seconds) ? gflop(size) / cpu.seconds : 0;
      const Split sp = search_split<T>(prec, ws, cpu, top);
      best = sp.best;
      b.gpu_parts = sp.gpu_parts;
      b.cpu_threads = sp.cpu_threads;
      b.kernel = sp.kernel;
      b.gpu_kernel = sp.gpu_kernel;
      b.gpu_gflops = sp.gpu_gflops;
    }
    // The winner gets the full check; one that fails it leaves the bucket to the CPU.
    if (b.gpu_parts > 0 && !winner_checks<T>(size, b.gpu_parts, b.cpu_threads, b.kernel, o_.seed + 99)) {
      b.gpu_parts = 0;
      b.kernel.clear();
      best = cpu;
    }
    // So does the GPU-only kernel where it is another; one that fails leaves strategy gpu the
    // precision's kernel (checked in phase 1).
    if (!b.gpu_kernel.empty() && !(b.gpu_parts == o_.parts && b.gpu_kernel == b.kernel) &&
        !winner_checks<T>(size, o_.parts, 0, b.gpu_kernel, o_.seed + 98))
      b.gpu_kernel.clear();
    b.best_gflops = std::isfinite(best.seconds) ? gflop(size) / best.seconds : 0;

    // On a discrete device, operands in tandem_malloc memory are copied with no packing, which
    // leaves the host's cores to the CPU share: their split is searched on such memory too.
    if (detail::gpu::is_discrete(*device_) && !out_of_time()) {
      Workspace<T> ws(size, /*in_tandem_memory=*/true);
      const Split sp = search_split<T>(prec, ws, cpu, top);
      if (sp.gpu_parts > 0 && winner_checks<T>(size, sp.gpu_parts, sp.cpu_threads, sp.kernel, o_.seed + 97)) {
        prof::ResidentSplit r;
        r.gpu_parts = sp.gpu_parts;
        r.cpu_threads = sp.cpu_threads;
        r.kernel = sp.kernel;
        r.gpu_gflops = sp.gpu_gflops;
        r.best_gflops = std::isfinite(sp.best.seconds) ? gflop(size) / sp.best.seconds : 0;
        b.resident = r;
      }
    }
    return b;
  }

  TuneOptions o_;
  clock::Stopwatch started_;
  std::shared_ptr<detail::gpu::Device> device_;
  detail::gpu::DeviceInfo info_;
  TuneReport report_;
  std::vector<prof::LogRecord> log_;
  std::set<std::string> built_;
  std::unique_ptr<power::Meter> meter_;  // for the energy and edp objectives
  double precision_deadline_ = 0;  // elapsed seconds by which this precision must be done
  double bucket_best_ = 0;  // fastest configuration of the bucket being split, for progress
  int bucket_index_ = 0;    // buckets finished in this precision, for progress
};

}  // namespace

TuneReport tune(const TuneOptions& options) { return Tuner(options).run(); }

}  // namespace tandem::tuner
